/*
 * An arg set as a JSON object (see arg_set_json.h).
 *
 * The args become a tree: objects and arrays hold their children in the
 * order they were first named, a leaf holds one value. The text is written
 * from the tree at the end, so a later arg may still add members to an
 * object an earlier one made. Recursion over the tree is bounded by
 * ARG_SET_JSON_MAX_DEPTH (a key of more parts is refused when added).
 */
#include "sql/arg_set_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/json_string.h"

typedef enum node_type { NODE_NULL, NODE_VALUE, NODE_ARRAY, NODE_OBJECT } node_type;

/* Objects look members up by a linear scan up to this many, by a hash
 * table beyond (an arg set with thousands of keys at one level). */
#define LINEAR_LOOKUP_MAX 16

typedef struct json_node {
  node_type type;
  arg_json_value value; /* NODE_VALUE; a string's text is owned */
  GPtrArray *children;  /* NODE_ARRAY, NODE_OBJECT: json_node * */
  GPtrArray *keys;      /* NODE_OBJECT: char *, parallel to children */
  GHashTable *index;    /* NODE_OBJECT, when large: key -> position + 1 */
} json_node;

struct arg_set_json {
  json_node root; /* always an object */
};

static void node_clear(json_node *node);

static void node_free(gpointer p) {
  node_clear(p);
  g_free(p);
}

static void node_clear(json_node *node) {
  if (node->type == NODE_VALUE && node->value.type == ARG_JSON_STRING)
    g_free((char *)node->value.u.string.text);
  if (node->children)
    g_ptr_array_free(node->children, TRUE);
  if (node->keys)
    g_ptr_array_free(node->keys, TRUE);
  if (node->index)
    g_hash_table_destroy(node->index);
  memset(node, 0, sizeof *node);
  node->type = NODE_NULL;
}

static void make_container(json_node *node, node_type type) {
  node->type = type;
  node->children = g_ptr_array_new_with_free_func(node_free);
  if (type == NODE_OBJECT)
    node->keys = g_ptr_array_new_with_free_func(g_free);
}

arg_set_json *arg_set_json_new(void) {
  arg_set_json *json = g_new0(arg_set_json, 1);
  make_container(&json->root, NODE_OBJECT);
  return json;
}

void arg_set_json_free(arg_set_json *json) {
  if (!json)
    return;
  node_clear(&json->root);
  g_free(json);
}

/* The member `key` (len bytes) of `object`, made null if absent. */
static json_node *object_member(json_node *object, const char *key,
                                size_t len) {
  GPtrArray *keys = object->keys;
  if (object->index) {
    char *k = g_strndup(key, len);
    gpointer pos = g_hash_table_lookup(object->index, k);
    g_free(k);
    if (pos)
      return g_ptr_array_index(object->children, GPOINTER_TO_SIZE(pos) - 1);
  } else {
    for (guint i = 0; i < keys->len; i++) {
      const char *k = g_ptr_array_index(keys, i);
      if (strncmp(k, key, len) == 0 && k[len] == '\0')
        return g_ptr_array_index(object->children, i);
    }
  }
  json_node *child = g_new0(json_node, 1);
  g_ptr_array_add(keys, g_strndup(key, len));
  g_ptr_array_add(object->children, child);
  if (object->index) {
    g_hash_table_insert(object->index, g_ptr_array_index(keys, keys->len - 1),
                        GSIZE_TO_POINTER(keys->len));
  } else if (keys->len > LINEAR_LOOKUP_MAX) {
    object->index = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < keys->len; i++)
      g_hash_table_insert(object->index, g_ptr_array_index(keys, i),
                          GSIZE_TO_POINTER((gsize)i + 1));
  }
  return child;
}

/* Element `i` of `array`, padding with nulls up to it. */
static json_node *array_element(json_node *array, guint i) {
  while (array->children->len <= i)
    g_ptr_array_add(array->children, g_new0(json_node, 1));
  return g_ptr_array_index(array->children, i);
}

/* Parses the indexes "[i][j]..." at `p` (up to `end`) into the node
 * `*target`, descending. */
static bool descend_indexes(json_node **target, const char *p, const char *end,
                            const char *key, char **error) {
  while (p < end) {
    if (*p != '[') {
      *error = g_strdup_printf("key '%s': text after an array index", key);
      return false;
    }
    p++;
    uint64_t index = 0;
    const char *digits = p;
    while (p < end && *p >= '0' && *p <= '9') {
      index = index * 10 + (uint64_t)(*p - '0');
      if (index > ARG_SET_JSON_MAX_INDEX) {
        *error = g_strdup_printf("key '%s': array index above %d", key,
                                 ARG_SET_JSON_MAX_INDEX);
        return false;
      }
      p++;
    }
    if (p == digits || p >= end || *p != ']') {
      *error = g_strdup_printf("key '%s': an array index is not a number in "
                               "brackets",
                               key);
      return false;
    }
    p++;
    json_node *node = *target;
    if (node->type == NODE_NULL)
      make_container(node, NODE_ARRAY);
    if (node->type != NODE_ARRAY) {
      *error = g_strdup_printf("key '%s': indexes something that is not an "
                               "array",
                               key);
      return false;
    }
    *target = array_element(node, (guint)index);
  }
  return true;
}

bool arg_set_json_add(arg_set_json *json, const char *key,
                      const arg_json_value *value, char **error) {
  json_node *target = &json->root;
  int depth = 0;
  for (const char *part = key; *part;) {
    const char *dot = strchr(part, '.');
    const char *end = dot ? dot : part + strlen(part);
    if (end > part) {
      if (++depth > ARG_SET_JSON_MAX_DEPTH) {
        *error = g_strdup_printf("key '%s': more than %d parts", key,
                                 ARG_SET_JSON_MAX_DEPTH);
        return false;
      }
      if (target->type == NODE_NULL)
        make_container(target, NODE_OBJECT);
      if (target->type != NODE_OBJECT) {
        *error = g_strdup_printf("key '%s': puts a member inside something "
                                 "that is not an object",
                                 key);
        return false;
      }
      const char *bracket = memchr(part, '[', (size_t)(end - part));
      const char *name_end = bracket ? bracket : end;
      target = object_member(target, part, (size_t)(name_end - part));
      if (bracket && !descend_indexes(&target, bracket, end, key, error))
        return false;
    }
    part = dot ? dot + 1 : end;
  }
  if (target == &json->root) {
    *error = g_strdup_printf("key '%s': names no member", key);
    return false;
  }
  node_clear(target);
  target->type = NODE_VALUE;
  target->value = *value;
  if (value->type == ARG_JSON_STRING)
    target->value.u.string.text =
        g_strndup(value->u.string.text, value->u.string.len);
  return true;
}

static void write_value(GString *out, const arg_json_value *v) {
  switch (v->type) {
  case ARG_JSON_NULL:
    g_string_append(out, "null");
    break;
  case ARG_JSON_INT:
    g_string_append_printf(out, "%" PRId64, v->u.int_value);
    break;
  case ARG_JSON_UINT:
    g_string_append_printf(out, "%" PRIu64, (uint64_t)v->u.int_value);
    break;
  case ARG_JSON_BOOL:
    g_string_append(out, v->u.int_value ? "true" : "false");
    break;
  case ARG_JSON_POINTER:
    g_string_append_printf(out, "\"0x%" PRIx64 "\"", (uint64_t)v->u.int_value);
    break;
  case ARG_JSON_REAL:
    if (isnan(v->u.real_value))
      g_string_append(out, "\"NaN\"");
    else if (isinf(v->u.real_value))
      g_string_append(out, v->u.real_value > 0 ? "\"Infinity\""
                                               : "\"-Infinity\"");
    else
      g_string_append_printf(out, "%f", v->u.real_value);
    break;
  case ARG_JSON_STRING:
    if (v->u.string.text)
      tm_json_append_string(out, v->u.string.text, v->u.string.len);
    else
      g_string_append(out, "null");
    break;
  }
}

static void write_node(GString *out, const json_node *node) {
  switch (node->type) {
  case NODE_NULL:
    g_string_append(out, "null");
    return;
  case NODE_VALUE:
    write_value(out, &node->value);
    return;
  case NODE_ARRAY:
  case NODE_OBJECT:
    break;
  }
  bool object = node->type == NODE_OBJECT;
  g_string_append_c(out, object ? '{' : '[');
  for (guint i = 0; i < node->children->len; i++) {
    if (i > 0)
      g_string_append_c(out, ',');
    if (object) {
      const char *k = g_ptr_array_index(node->keys, i);
      tm_json_append_string(out, k, strlen(k));
      g_string_append_c(out, ':');
    }
    write_node(out, g_ptr_array_index(node->children, i));
  }
  g_string_append_c(out, object ? '}' : ']');
}

char *arg_set_json_to_string(const arg_set_json *json, size_t *len) {
  GString *out = g_string_new(NULL);
  write_node(out, &json->root);
  if (len)
    *len = out->len;
  return g_string_free(out, FALSE);
}
