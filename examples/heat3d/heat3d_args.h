/* The payloads of the heat grid's commands: the same structs on the host
 * (heat3d.c) and in the kernels (compiled in front of heat3d_kernels.c). */
#ifndef HEAT3D_ARGS_H
#define HEAT3D_ARGS_H

typedef struct heat_cell_args {
    int x, y, z;
    float amount; /* HEAT_ADD only */
} heat_cell_args;

typedef struct heat_count_args {
    float threshold;
} heat_count_args;

typedef struct heat_alpha_args {
    float alpha;
} heat_alpha_args;

#endif
