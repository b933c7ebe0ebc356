/* A small reader for the module-scope facts of a WGSL source that the
 * launch convention needs: compute entry points with their @workgroup_size,
 * @group/@binding variables (address space, access, type name, whether the
 * module refers to them at all) and struct member types. It is not a WGSL
 * parser: Dawn compiles and validates the source; this only reads what
 * webgpu.h does not report back. */
#ifndef RK_WGSL_SCAN_H
#define RK_WGSL_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { WGSL_NAME_MAX = 64 };

typedef struct wgsl_entry {
    char name[WGSL_NAME_MAX];
    uint32_t workgroup[3];
    bool workgroup_known; /* false when a size is an expression we cannot evaluate */
    /* A size that names a pipeline-overridable constant (`override`): the
     * launch's block supplies it. workgroup[d] is then its default, or 0. */
    bool dim_override[3];
    char dim_name[3][WGSL_NAME_MAX];
} wgsl_entry;

typedef enum wgsl_space { WGSL_STORAGE_RW = 1, WGSL_STORAGE_READ, WGSL_UNIFORM, WGSL_OTHER } wgsl_space;

typedef struct wgsl_binding {
    uint32_t group, binding;
    wgsl_space space;
    char name[WGSL_NAME_MAX];
    char type[WGSL_NAME_MAX]; /* first token of the type: "array", "Params", "u32", ... */
    bool referenced;          /* the module mentions the name outside its declaration */
} wgsl_binding;

typedef struct wgsl_member {
    char type[WGSL_NAME_MAX]; /* "f32", "i32", "u32", "vec2<u32>", ... */
} wgsl_member;

typedef struct wgsl_struct {
    char name[WGSL_NAME_MAX];
    wgsl_member *members;
    size_t member_count;
} wgsl_struct;

typedef struct wgsl_facts {
    wgsl_entry *entries;
    size_t entry_count;
    wgsl_binding *bindings;
    size_t binding_count;
    wgsl_struct *structs;
    size_t struct_count;
    /* mentions[e * binding_count + b]: entry e's body names binding b. */
    bool *mentions;
} wgsl_facts;

/* false only when out of memory. */
bool rk__wgsl_scan(const char *source, wgsl_facts *out);
void rk__wgsl_facts_free(wgsl_facts *f);
const wgsl_struct *rk__wgsl_find_struct(const wgsl_facts *f, const char *name);
/* The declaration at @group(0) @binding(index) that entry point `entry`
 * uses: one its body names if several share the binding (one module may hold
 * kernels with different parameters), else the first; NULL if none. */
const wgsl_binding *rk__wgsl_binding_for(const wgsl_facts *f, size_t entry, uint32_t index);

#endif
