-- Android processes with the package they run. Written for tracemerge from
-- the public documentation of the trace_processor module of the same name.

-- One row per process: its uid split into Android user id and app id
-- (uid = user_id * 100000 + app id), and the package_list entry of that
-- app id. Several packages can share an app id (sharedUserId): then the
-- package named like the process (without a ':service' suffix) is taken,
-- else the first by name.
CREATE PERFETTO TABLE android_process_metadata(
  upid JOINID, pid LONG, process_name STRING, uid LONG, user_id LONG,
  package_name STRING, version_code LONG, debuggable BOOL
) AS
WITH proc AS (
  SELECT upid, pid, name, uid,
         coalesce(android_appid, uid % 100000) AS appid,
         coalesce(android_user_id, uid / 100000) AS user_id
  FROM process
), ranked AS (
  SELECT p.upid, k.package_name, k.version_code, k.debuggable,
         row_number() OVER (
           PARTITION BY p.upid
           ORDER BY k.package_name = str_split(p.name, ':', 0) DESC,
                    k.package_name) AS r
  FROM proc p JOIN package_list k ON k.uid = p.appid
)
SELECT p.upid, p.pid, p.name AS process_name, p.appid AS uid, p.user_id,
       r.package_name, r.version_code, r.debuggable
FROM proc p LEFT JOIN ranked r ON r.upid = p.upid AND r.r = 1;
