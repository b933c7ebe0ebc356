/* Command payloads of the thermostat simulation: included by the host
 * program and put in front of the DSL source (one layout, written once). */
#ifndef THERMOSTAT_ARGS_H
#define THERMOSTAT_ARGS_H
typedef struct heater_args { int x, y; float power; } heater_args; /* global: move and set the heater */
typedef struct probe_args { int x, y; } probe_args;                /* region (row y): one cell's temperature */
#endif
