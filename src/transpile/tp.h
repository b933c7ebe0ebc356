/* What the transpiler's stages share: the arena, diagnostics, tokens, types,
 * the typed tree and each stage's entry point.
 *
 * Pipeline (one file each, chibicc style):
 *   source.c   files, #include search, the built-in headers
 *   lex.c      text -> tokens
 *   pp.c       tokens -> preprocessed tokens (pp_expr.c evaluates #if)
 *   parse*.c   tokens -> tree, names resolved through scopes
 *   sema.c     types every expression, inserts implicit conversions
 *              (sema_const.c evaluates integer constant expressions),
 *              enforces the subset (check.c: call graph, entry points)
 *   stencil.c  target-neutral analysis of stencil kernels
 *   emit_*.c   one emitter per target
 * Memory comes from one arena per compilation; fatal conditions (out of
 * memory, too many errors) unwind with longjmp to rk_transpile.
 */
#ifndef RK_TRANSPILE_TP_H
#define RK_TRANSPILE_TP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ringkernel/transpile.h"

/* Limits that keep hostile input from exhausting memory or the stack. */
enum {
    TP_MAX_ERRORS = 50,           /* then "too many errors" and stop */
    TP_MAX_INCLUDE_DEPTH = 64,
    TP_MAX_NESTING = 200,         /* parser recursion: parens, blocks, declarators */
    TP_MAX_EXPR_DEPTH = 512,      /* depth of an expression tree (a+a+a+...) */
    TP_MAX_TOKENS = 1000000,      /* tokens produced by macro expansion, in all */
    TP_MAX_ARENA = 256u << 20,    /* bytes per compilation */
};

typedef struct tp_ctx tp_ctx;
typedef struct tp_type tp_type;
typedef struct tp_node tp_node;
typedef struct tp_obj tp_obj;
typedef struct tp_member tp_member;

/* ---- arena, strings, hash map ------------------------------------------ */

typedef struct tp_chunk tp_chunk;
typedef struct tp_arena {
    tp_chunk *head;
    size_t total;
} tp_arena;

/* Zeroed memory from the compilation's arena; unwinds on exhaustion. */
void *rk__tp_alloc(tp_ctx *ctx, size_t size);
char *rk__tp_strndup(tp_ctx *ctx, const char *s, size_t n);
char *rk__tp_strdup(tp_ctx *ctx, const char *s);
char *rk__tp_format(tp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *rk__tp_vformat(tp_ctx *ctx, const char *fmt, va_list ap);
void rk__tp_arena_free(tp_arena *arena);

/* A growing text buffer in the arena. */
typedef struct tp_buf {
    tp_ctx *ctx;
    char *data;
    size_t len, cap;
} tp_buf;
void rk__tp_buf_init(tp_buf *b, tp_ctx *ctx); /* starts small and grows */
void rk__tp_buf_putn(tp_buf *b, const char *s, size_t n);
void rk__tp_buf_puts(tp_buf *b, const char *s);
void rk__tp_buf_printf(tp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open-addressing map from byte strings to pointers. */
typedef struct tp_map_entry {
    const char *key;
    int keylen;
    void *value;
} tp_map_entry;
typedef struct tp_map {
    tp_map_entry *buckets;
    int capacity, used;
} tp_map;
void *rk__tp_map_get(const tp_map *map, const char *key, int keylen);
void rk__tp_map_put(tp_ctx *ctx, tp_map *map, const char *key, int keylen, void *value);
void rk__tp_map_delete(tp_map *map, const char *key, int keylen);

/* ---- files and tokens --------------------------------------------------- */

typedef struct tp_file {
    const char *name;     /* shown in diagnostics */
    const char *dir;      /* for #include "..."; NULL for virtual files */
    const char *contents; /* NUL-terminated, after line splicing */
    size_t size;
    bool builtin;         /* one of the transpiler's own headers */
    bool pragma_once;
    bool included;        /* entered at least once */
} tp_file;

typedef enum tp_token_kind {
    TK_IDENT,
    TK_PUNCT,
    TK_KEYWORD,
    TK_STR,
    TK_NUM,
    TK_PP_NUM,
    TK_INCLUDE_END, /* marks where an included file's tokens end (dropped by pp) */
    TK_EOF,
} tp_token_kind;

typedef struct tp_hideset tp_hideset;

typedef struct tp_token {
    tp_token_kind kind;
    struct tp_token *next;
    const char *loc; /* spelling */
    int len;
    /* Where diagnostics point: the token itself, or for a token that came
     * from a macro body, the macro's name at the expansion site. */
    tp_file *file;
    int line, col;
    const char *line_start;
    bool at_bol, has_space;
    tp_hideset *hideset;
    /* Literals (after rk__tp_convert_literals). */
    tp_type *ty;
    int64_t ival;
    double fval;
    char *str; /* string literal bytes, NUL-terminated */
    int str_len;
    /* A malformed literal or stray character: reported only if the token
     * survives preprocessing (so `#if 0` blocks may hold any text). */
    const char *lex_error;
    void *pp_data; /* the preprocessor's, on TK_INCLUDE_END */
} tp_token;

/* ---- diagnostics -------------------------------------------------------- */

typedef struct tp_diag {
    struct tp_diag *next;
    rk_diagnostic_severity severity;
    tp_file *file;
    int line, col;
    const char *line_start;
    char *message;
} tp_diag;

void rk__tp_error(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rk__tp_warn(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rk__tp_note(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rk__tp_vdiag(tp_ctx *ctx, rk_diagnostic_severity sev, const tp_token *tok, const char *fmt, va_list ap);
/* Records the error and unwinds to the innermost recovery point. */
_Noreturn void rk__tp_syntax_error(tp_ctx *ctx, const tp_token *tok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Unwinds the whole compilation (the message has been recorded). */
_Noreturn void rk__tp_fatal(tp_ctx *ctx);
/* Formats every diagnostic as a compiler prints it. */
char *rk__tp_render_diagnostics(tp_ctx *ctx);

/* ---- source files ------------------------------------------------------- */

tp_file *rk__tp_new_file(tp_ctx *ctx, const char *name, const char *dir, const char *text, size_t size,
                         bool builtin);
/* Finds an #include target: NULL when not found (no diagnostic). A file that
 * is there but is not a regular file, or holds a NUL byte, is reported at
 * where and ends the compilation. */
tp_file *rk__tp_find_include(tp_ctx *ctx, const char *name, bool angled, const tp_file *from, const tp_token *where);
tp_file *rk__tp_builtin_header(tp_ctx *ctx, const char *name);
/* Reads the main file; NULL with errno set when it cannot be opened (other
 * refusals as for rk__tp_find_include). */
tp_file *rk__tp_load_main(tp_ctx *ctx, const char *path);

/* ---- lexer and preprocessor --------------------------------------------- */

tp_token *rk__tp_tokenize(tp_ctx *ctx, tp_file *file);
tp_token *rk__tp_preprocess(tp_ctx *ctx, tp_token *tok);
/* Evaluates a #if line (already macro-expanded, `defined` replaced). */
int64_t rk__tp_pp_eval(tp_ctx *ctx, tp_token *expr, const tp_token *directive);
void rk__tp_convert_literals(tp_ctx *ctx, tp_token *tok);
bool rk__tp_convert_number(tp_ctx *ctx, tp_token *tok);
bool rk__tp_equal(const tp_token *tok, const char *s);
bool rk__tp_is_keyword(const char *s, int len);
tp_token *rk__tp_new_eof(tp_ctx *ctx, const tp_token *like);

/* ---- types -------------------------------------------------------------- */

typedef enum tp_type_kind {
    TY_ERROR, /* the type of an expression that already has an error */
    TY_VOID,
    TY_BOOL,
    TY_CHAR,
    TY_SHORT,
    TY_INT,
    TY_LONG, /* 64-bit: long and long long */
    TY_FLOAT,
    TY_DOUBLE,
    TY_ENUM,
    TY_PTR,
    TY_ARRAY,
    TY_STRUCT,
    TY_FUNC,
    TY_GRID_POS, /* the stencil grid position */
} tp_type_kind;

struct tp_member {
    tp_member *next;
    tp_type *ty;
    tp_token *name;
    int index;
    int offset;
    const char *emit_name; /* an emitter's, cached */
};

typedef struct tp_param_type {
    struct tp_param_type *next;
    tp_type *ty;
} tp_param_type;

struct tp_type {
    tp_type_kind kind;
    int size, align; /* x86-64 System V layout, which CUDA shares */
    bool is_unsigned;
    bool is_const, is_volatile, is_restrict;
    tp_type *origin; /* the unqualified type this was copied from */
    tp_type *base;   /* pointee or element */
    int array_len;
    /* struct */
    tp_member *members;
    tp_token *tag;
    const char *emit_name; /* unique in the translation unit */
    bool is_complete;
    bool is_being_defined; /* struct: between its '{' and '}' (a nested definition of it is an error) */
    tp_token *def_tok;     /* where the struct was defined */
    /* function */
    tp_type *return_ty;
    tp_param_type *params;
    int param_count;
    bool is_variadic;
    tp_obj *param_objs;  /* function declarators: the parameters as objects */
};

extern tp_type rk__tp_ty_error, rk__tp_ty_void, rk__tp_ty_bool, rk__tp_ty_char, rk__tp_ty_schar,
    rk__tp_ty_uchar, rk__tp_ty_short, rk__tp_ty_ushort, rk__tp_ty_int, rk__tp_ty_uint, rk__tp_ty_long,
    rk__tp_ty_ulong, rk__tp_ty_float, rk__tp_ty_double, rk__tp_ty_grid_pos;

bool rk__tp_is_integer(const tp_type *ty);
bool rk__tp_is_flonum(const tp_type *ty);
bool rk__tp_is_arith(const tp_type *ty);
bool rk__tp_is_scalar(const tp_type *ty);
bool rk__tp_is_pointer_like(const tp_type *ty); /* pointer or array */
tp_type *rk__tp_unqual(tp_type *ty);
tp_type *rk__tp_qualified(tp_ctx *ctx, tp_type *ty, bool is_const, bool is_volatile, bool is_restrict);
tp_type *rk__tp_pointer_to(tp_ctx *ctx, tp_type *base);
tp_type *rk__tp_array_of(tp_ctx *ctx, tp_type *base, int len);
tp_type *rk__tp_func_type(tp_ctx *ctx, tp_type *return_ty);
tp_type *rk__tp_struct_type(tp_ctx *ctx);
tp_type *rk__tp_enum_type(tp_ctx *ctx);
tp_type *rk__tp_copy_type(tp_ctx *ctx, const tp_type *ty);
/* Same type, ignoring top-level qualifiers when `ignore_quals`. */
bool rk__tp_same_type(const tp_type *a, const tp_type *b);
/* Lays out a struct's members (x86-64 rules) and sets size and alignment. */
void rk__tp_layout_struct(tp_type *ty);
/* "const float *", "struct point" ... for diagnostics. */
char *rk__tp_type_name(tp_ctx *ctx, const tp_type *ty);
tp_type *rk__tp_common_type(tp_type *a, tp_type *b);
bool rk__tp_contains_pointer(const tp_type *ty);

/* ---- the tree ----------------------------------------------------------- */

typedef enum tp_node_kind {
    /* expressions */
    ND_NUM,        /* integer constant: ival */
    ND_FNUM,       /* floating constant: fval, spelled by tok */
    ND_VAR,        /* obj */
    ND_FUNC_NAME,  /* a function used as a value (refused by sema) */
    ND_ADD, ND_SUB, ND_MUL, ND_DIV, ND_MOD,
    ND_BITAND, ND_BITOR, ND_BITXOR, ND_SHL, ND_SHR,
    ND_EQ, ND_NE, ND_LT, ND_LE, ND_GT, ND_GE,
    ND_LOGAND, ND_LOGOR,
    ND_NOT, ND_BITNOT, ND_NEG, ND_PLUS,
    ND_ADDR, ND_DEREF,
    ND_ASSIGN,     /* lhs = rhs */
    ND_ASSIGN_OP,  /* lhs op= rhs; op holds the binary kind */
    ND_PRE_INC, ND_PRE_DEC, ND_POST_INC, ND_POST_DEC,
    ND_COND,       /* cond ? then : els */
    ND_COMMA,
    ND_MEMBER,     /* lhs.member */
    ND_ARROW,      /* lhs->member */
    ND_INDEX,      /* lhs[rhs] */
    ND_CALL,       /* obj(args) */
    ND_BUILTIN,    /* builtin(args): a DSL or math function */
    ND_CAST,       /* (ty)lhs, written in the source */
    ND_CONV,       /* implicit conversion of lhs to ty, inserted by sema */
    ND_SIZEOF,     /* sizeof/_Alignof: folded to ival by sema */
    ND_INIT_LIST,  /* { args } */
    /* statements */
    ND_BLOCK,      /* { body } */
    ND_EXPR_STMT,  /* lhs; */
    ND_DECL,       /* obj [= init] */
    ND_IF, ND_FOR, ND_WHILE, ND_DO, ND_SWITCH, ND_CASE, ND_DEFAULT,
    ND_BREAK, ND_CONTINUE, ND_RETURN,
    ND_NULL_STMT,
    ND_STATIC_ASSERT,
} tp_node_kind;

/* Builtin functions: the DSL (dsl.h, dsl_stencil.h) and <math.h>. */
typedef enum tp_builtin_id {
#define TP_BUILTIN_(id, name, ret, flags, nargs, a0, a1, a2, a3, a4, dx, dy, dz) TP_B_##id,
#include "builtins.def"
#undef TP_BUILTIN_
    TP_B_COUNT
} tp_builtin_id;

/* Argument/return type codes in builtins.def. */
typedef enum tp_bt {
    BT_NONE, BT_VOID, BT_INT, BT_UINT, BT_I64, BT_U64, BT_FLOAT, BT_DOUBLE, BT_VOIDPTR,
    BT_PINT, BT_PUINT, BT_PU64, BT_PFLOAT, /* pointers to those */
    BT_PCUINT, BT_PCU64,                   /* pointers to const */
    BT_POS, BT_ANY_BUFFER, BT_ELEM, /* stencil: grid position, any pointer, its element */
} tp_bt;

enum {
    TP_BF_MATH = 1 << 0,     /* <math.h> */
    TP_BF_GRID = 1 << 1,     /* thread/block/grid index or size: not in stencils */
    TP_BF_SYNC = 1 << 2,     /* barrier: not in stencils */
    TP_BF_STENCIL = 1 << 3,  /* needs the grid position */
    TP_BF_3D = 1 << 4,       /* makes a stencil 3-D */
    TP_BF_NEIGHBOUR = 1 << 5,/* reads a buffer at an offset */
    TP_BF_WARP = 1 << 6,
    TP_BF_ATOMIC = 1 << 7,
    TP_BF_CONST = 1 << 8,    /* INFINITY, NAN */
    TP_BF_RUNTIME = 1 << 9,  /* needs the CPU executor's runtime: not in stencils */
};

typedef struct tp_builtin {
    const char *name;
    tp_bt ret;
    int nargs;
    tp_bt args[5];
    unsigned flags;
    /* Neighbour reads: offsets in x, y, z for the named forms, or
     * arg_offsets for rk_at/rk_at3. */
    int dx, dy, dz;
} tp_builtin;

extern const tp_builtin rk__tp_builtins[TP_B_COUNT];
const tp_builtin *rk__tp_find_builtin(const char *name, int len, tp_builtin_id *id);
/* Names of C library functions that kernels cannot call (printf, malloc ...). */
bool rk__tp_is_host_library_function(const char *name, int len);
/* The DSL's spelling of a CUDA name (threadIdx, __syncthreads, atomicAdd ...); NULL if none. */
const char *rk__tp_dsl_spelling(const char *name, int len);
/* Why a C library or CUDA header cannot be included; NULL for other names. */
const char *rk__tp_unavailable_header_reason(const char *name);

struct tp_node {
    tp_node_kind kind;
    tp_node *next;   /* statement lists, argument lists */
    tp_type *ty;     /* set by sema */
    tp_token *tok;   /* for diagnostics */
    int depth;       /* tree depth below this expression */

    tp_node *lhs, *rhs;
    tp_node *cond, *then, *els, *init, *inc, *body;
    tp_node *args;   /* call arguments, initializer list elements */
    int nargs;
    tp_node_kind op; /* ND_ASSIGN_OP */
    tp_obj *obj;     /* ND_VAR, ND_CALL (callee), ND_DECL */
    tp_member *member;
    tp_builtin_id builtin;
    tp_type *cast_ty;/* ND_CAST, ND_SIZEOF (operand type when no lhs) */
    int64_t ival;    /* ND_NUM, ND_CASE value, ND_SIZEOF result */
    double fval;
    bool is_alignof;
    bool sema_done;
    /* Stencil neighbour reads resolved by stencil.c. */
    int off[3];
    tp_obj *buffer;
    char *message;   /* ND_STATIC_ASSERT */
    tp_node *case_next;   /* ND_SWITCH: its case labels, in order */
    tp_node *default_case;/* ND_SWITCH */
};

typedef enum tp_fn_kind {
    FN_HELPER = 0, /* an ordinary (device) function */
    FN_DEVICE,     /* RK_DEVICE */
    FN_KERNEL,     /* RK_KERNEL */
    FN_HANDLER,    /* RK_HANDLER */
} tp_fn_kind;

typedef struct tp_call_edge {
    struct tp_call_edge *next;
    tp_obj *callee;
    tp_token *tok;
} tp_call_edge;

typedef struct tp_stencil tp_stencil;

struct tp_obj {
    tp_obj *next;       /* in its list (locals, params, globals) */
    const char *name;
    tp_token *tok;
    tp_type *ty;
    bool is_local, is_param, is_function, is_static, is_inline, is_shared, is_enum_const;
    bool is_typedef;
    int64_t enum_val;
    tp_node *init;      /* global constants */
    /* functions */
    tp_fn_kind fn_kind;
    tp_token *kind_tok;  /* the RK_KERNEL/RK_HANDLER marker */
    tp_obj *params;
    tp_node *body;      /* NULL for a prototype */
    tp_obj *definition; /* the defining declaration of this function */
    tp_call_edge *calls;
    int visit;          /* recursion check */
    rk_transpile_kind entry_kind;
    int block[3];        /* RK_BLOCK_SIZE: the block every launch uses; 0 when not given */
    tp_token *block_tok;
    tp_stencil *stencil;
    bool used;
    const char *emit_name;
};

/* File-scope items in source order (what an emitter walks). */
typedef enum tp_item_kind { IT_STRUCT, IT_FUNC, IT_VAR, IT_STATIC_ASSERT } tp_item_kind;
typedef struct tp_item {
    struct tp_item *next;
    tp_item_kind kind;
    tp_type *struct_ty;
    tp_obj *obj;
    tp_node *node; /* IT_STATIC_ASSERT; IT_FUNC: the body, on the defining item only */
} tp_item;

typedef struct tp_program {
    tp_item *items;
    tp_obj *functions; /* every function object, in order of first declaration */
} tp_program;

/* ---- stencils ------------------------------------------------------------ */

typedef struct tp_stencil_buffer {
    struct tp_stencil_buffer *next;
    tp_obj *param;
    bool written;
    const char *tile_name;
} tp_stencil_buffer;

struct tp_stencil {
    tp_obj *pos;        /* the rk_grid_pos parameter */
    int dims;           /* 2 or 3 */
    int tile[3];
    int halo;
    int max_offset;
    tp_stencil_buffer *tiled; /* buffers read through neighbour accesses */
};

/* ---- stages -------------------------------------------------------------- */

tp_program *rk__tp_parse(tp_ctx *ctx, tp_token *tok);
/* Types one expression (idempotent): used by the parser for constant
 * expressions and sizeof, and by sema for everything. */
void rk__tp_type_expr(tp_ctx *ctx, tp_node *node);
/* Evaluates an integer constant expression; false (and a diagnostic naming
 * `what`) when it is not one. */
bool rk__tp_eval_const(tp_ctx *ctx, tp_node *node, int64_t *out, const char *what);
bool rk__tp_try_eval(tp_ctx *ctx, tp_node *node, int64_t *out);
/* sema_const.c: the value of a typed integer constant expression; v
 * converted to integer type ty. */
bool rk__tp_eval_integer(const tp_node *node, int64_t *out);
int64_t rk__tp_truncate_to(int64_t v, const tp_type *ty);
void rk__tp_sema_function(tp_ctx *ctx, tp_obj *fn);
void rk__tp_sema_global(tp_ctx *ctx, tp_obj *var);
/* Converts node to ty for assignment, initialization, arguments, return. */
tp_node *rk__tp_convert_for_assign(tp_ctx *ctx, tp_node *node, tp_type *ty, const char *context);
bool rk__tp_is_null_pointer_constant(tp_ctx *ctx, tp_node *node);
/* Whole-program checks: recursion, undefined callees, entry points. */
void rk__tp_check_program(tp_ctx *ctx, tp_program *prog);
/* Barriers every thread of a block may not reach (uniformity.c). */
void rk__tp_check_uniformity(tp_ctx *ctx, tp_program *prog);
void rk__tp_analyze_stencil(tp_ctx *ctx, tp_obj *fn);

/* An emitter writes the whole output for one target. */
typedef void (*tp_emit_fn)(tp_ctx *ctx, tp_program *prog, tp_buf *out);
void rk__tp_emit_cuda(tp_ctx *ctx, tp_program *prog, tp_buf *out);
void rk__tp_emit_wgsl(tp_ctx *ctx, tp_program *prog, tp_buf *out);
void rk__tp_emit_msl(tp_ctx *ctx, tp_program *prog, tp_buf *out);
/* Names that collide with the target language get a prefix. */
const char *rk__tp_cuda_name(tp_ctx *ctx, const char *name);

/* Shared by the emitters (emit_common.c). */
/* C's spelling of a binary operator; `otherwise` for any other node kind
 * (each target decides what a non-operator prints as). */
const char *rk__tp_binary_op(tp_node_kind k, const char *otherwise);
/* The main file's name without its directory ("<input>" when it has none),
 * for the header comment of an output. */
const char *rk__tp_source_base_name(const tp_ctx *ctx);
/* The value of a constant floating expression (literals, INFINITY/NAN, + - * /
 * and conversions), computed as C computes it; false if n is not one. */
bool rk__tp_fold_float(const tp_node *n, double *v);
/* Appends "name (kind)" to a comma-separated list when fn is an entry point. */
void rk__tp_note_entry_point(tp_buf *list, const tp_obj *fn);

/* How a target with block-shared memory spells a tiled stencil kernel's body
 * (emit_stencil.c); the callbacks get `emitter`. */
typedef struct tp_tile_target {
    tp_ctx *ctx;
    tp_buf *out;
    int *indent;                 /* the emitter's indentation, in levels */
    void *emitter;
    const char *shared;          /* a tile's qualifier, with its space */
    const char *thread_id;       /* the thread's position in its block (.x .y .z) */
    const char *block_id;        /* the block's position in the grid */
    const char *clamp;           /* clamp-to-edge helper: (index, size) */
    const char *barrier;         /* the block's barrier, a whole line */
    const char *load_comment[2]; /* two lines over the tile loads */
    void (*declare)(void *emitter, const tp_type *ty, const char *name);
    const char *(*name)(void *emitter, tp_obj *o);
    void (*body)(void *emitter, tp_node *n);
} tp_tile_target;
void rk__tp_emit_tiled_stencil(const tp_tile_target *t, const tp_stencil *st, tp_node *body);

/* ---- the compilation ----------------------------------------------------- */

struct tp_ctx {
    tp_arena arena;
    jmp_buf *fatal;          /* whole compilation */
    jmp_buf *recover;        /* innermost syntax-error recovery point */
    tp_token *error_tok;     /* where the last syntax error was */
    rk_status fatal_status;  /* why it unwound */
    const rk_transpile_desc *desc;
    const char *main_name;
    tp_diag *diags, **diag_tail;
    int error_count, warning_count;
    bool too_many_errors;
    bool arena_exhausted;
    long tokens_made;        /* by macro expansion */
    tp_map files;            /* path -> tp_file */
    int unique;              /* counter for generated names */
    tp_map struct_names;     /* emit names of structs, for uniqueness */
    tp_obj *sema_fn;         /* the function sema is typing */
};

void rk__tp_ctx_init(tp_ctx *ctx, const rk_transpile_desc *desc);

#endif
