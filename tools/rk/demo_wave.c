/* rk demo wave: the showcase. A 2-D wave simulation held on the device
 * (examples/wave), rain drops and keys turned into commands, a live view in
 * the terminal (colour half-blocks at a steady frame rate) and/or PNG
 * frames, and how many commands each pattern fits in a 60 FPS frame.
 *
 *   rk demo wave [--pattern persistent|traditional|graph] [--backend cuda] [--png DIR]
 *   rk demo wave --frames 120 --no-tty          (CI: no terminal, a line per few frames)
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "showcase_cli.h"
#include "wave_png.h"
#include "wave_sim.h"
#include "wave_view.h"

#define FRAME_BUDGET_US (1e6 / 60.0)

static volatile sig_atomic_t interrupted;
static struct termios saved_termios;
static bool raw_terminal, view_started;

static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t deadline) {
    struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !interrupted) {
    }
}

/* xorshift64*: the rain is the same for a given --seed. */
static uint64_t rng_state;
static uint32_t rng_next(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

/* ---- the terminal ------------------------------------------------------------ */

static void terminal_restore(void) {
    if (view_started) fputs("\x1b[0m\x1b[?25h\n", stdout);
    if (raw_terminal) tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
    fflush(stdout);
    view_started = raw_terminal = false;
}

static void terminal_start(void) {
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_termios) == 0) {
        struct termios t = saved_termios;
        t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        raw_terminal = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
    }
    fputs("\x1b[2J\x1b[?25l", stdout); /* clear, hide the cursor */
    view_started = true;
}

/* A key if one was pressed, else 0. */
static int read_key(void) {
    if (!raw_terminal) return 0;
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    unsigned char c = 0;
    if (poll(&p, 1, 0) == 1 && read(STDIN_FILENO, &c, 1) == 1) return c;
    return 0;
}

/* The picture's size in pixels: square cells, two pixels per text row. */
static void view_size(int nx, int ny, int *w, int *h) {
    struct winsize ws;
    int cols = 100, rows = 40;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10 && ws.ws_row > 10) {
        cols = ws.ws_col;
        rows = ws.ws_row;
    }
    int max_w = cols - 2, max_h = (rows - 6) * 2;
    if (max_w > 160) max_w = 160;
    int width = max_w, height = (int)((long long)width * ny / nx);
    if (height > max_h) {
        height = max_h;
        width = (int)((long long)height * nx / ny);
    }
    *w = width < 8 ? 8 : width;
    *h = (height < 8 ? 8 : height) & ~1;
}

typedef struct text {
    char *data;
    size_t used, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = t->data ? vsnprintf(t->data + t->used, t->cap - t->used, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && t->used + (size_t)n < t->cap) {
            t->used += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 1 << 16;
        char *bigger = realloc(t->data, cap);
        if (!bigger) return;
        t->data = bigger;
        t->cap = cap;
    }
}

/* Upper pixel in the foreground, lower in the background of one '▀'. */
static void draw_picture(text *t, const uint8_t *rgb, int w, int h) {
    for (int y = 0; y < h; y += 2) {
        int last_fg = -1, last_bg = -1;
        put(t, " ");
        for (int x = 0; x < w; x++) {
            const uint8_t *a = rgb + ((size_t)y * w + x) * 3, *b = rgb + ((size_t)(y + 1) * w + x) * 3;
            int fg = a[0] << 16 | a[1] << 8 | a[2], bg = b[0] << 16 | b[1] << 8 | b[2];
            if (fg != last_fg) put(t, "\x1b[38;2;%d;%d;%dm", a[0], a[1], a[2]);
            if (bg != last_bg) put(t, "\x1b[48;2;%d;%d;%dm", b[0], b[1], b[2]);
            last_fg = fg;
            last_bg = bg;
            put(t, "\xe2\x96\x80");
        }
        put(t, "\x1b[0m\x1b[K\n");
    }
}

/* ---- how many commands fit in a frame --------------------------------------------- */

/* Mean time of a mixed command (inject, step 1, query by turns, each waited). */
static rk_status calibrate(const wave_config *base, wave_pattern pattern, int ops, double *mean_us) {
    wave_config cfg = *base;
    cfg.pattern = pattern;
    wave_sim *sim = NULL;
    rk_status s = wave_sim_create(&cfg, &sim);
    if (s != RK_OK) return s;
    int cx = cfg.nx / 2, cy = cfg.ny / 2;
    uint64_t t0 = 0;
    for (int i = -30; i < ops && s == RK_OK; i++) { /* 30 untimed first */
        if (i == 0) t0 = now_ns();
        wave_ticket t = 0;
        switch ((i + 30) % 3) {
        case 0: s = wave_inject(sim, cx, cy, i % 2 ? 1e-4f : -1e-4f, &t); break;
        case 1: s = wave_step(sim, 1, &t); break;
        default: s = wave_query(sim, cx, cy, &t); break;
        }
        if (s == RK_OK) s = wave_wait(sim, t, NULL);
    }
    *mean_us = (double)(now_ns() - t0) / 1e3 / ops;
    rk_status d = wave_sim_destroy(sim);
    return s != RK_OK ? s : d;
}

/* ---- the demo ------------------------------------------------------------------------ */

typedef struct demo {
    wave_config cfg;
    wave_sim *sim;
    wave_sim_info info;
    bool tty, quiet;
    const char *png_dir;
    uint64_t frames, steps_per_frame;
    double fps, drops_per_second;
    double fit[3];           /* mixed commands per 60 FPS frame, by pattern, timed at the start */
    uint64_t commands, command_ns;
    float *field;
    uint8_t *rgb;
    float scale;
} demo;

/* One command of the demo. */
typedef enum command_kind { CMD_DROP, CMD_STEPS, CMD_PROBE, CMD_SPEED, CMD_DAMPING } command_kind;

typedef struct command {
    command_kind kind;
    int x, y;
    float value; /* amplitude, speed or damping */
} command;

static rk_status send_command(demo *d, const command *c, wave_ticket *t) {
    switch (c->kind) {
    case CMD_DROP: return wave_inject(d->sim, c->x, c->y, c->value, t);
    case CMD_STEPS: return wave_step(d->sim, (uint32_t)d->steps_per_frame, t);
    case CMD_PROBE: return wave_query(d->sim, d->cfg.nx / 2, d->cfg.ny / 2, t);
    case CMD_SPEED: return wave_set_speed(d->sim, c->value, t);
    case CMD_DAMPING: return wave_set_damping(d->sim, c->value, t);
    }
    return RK_INVALID_ARGUMENT;
}

/* Sends one command and waits for it, timing both. */
static rk_status timed(demo *d, command c, float *value) {
    wave_ticket t = 0;
    uint64_t t0 = now_ns();
    rk_status s = send_command(d, &c, &t);
    if (s == RK_OK) s = wave_wait(d->sim, t, value);
    if (s == RK_OK) {
        d->commands++;
        d->command_ns += now_ns() - t0;
    }
    return s;
}

static rk_status drop(demo *d, int x, int y, float amplitude) {
    return timed(d, (command){.kind = CMD_DROP, .x = x, .y = y, .value = amplitude}, NULL);
}

/* Keys: space drop, +/- speed, [ ] damping, q quit. false = quit. */
static bool handle_keys(demo *d, rk_status *s) {
    for (int key; (key = read_key()) != 0 && *s == RK_OK;) {
        wave_sim_get_info(d->sim, &d->info);
        if (key == 'q' || key == 'Q' || key == 27) return false;
        if (key == ' ') {
            *s = drop(d, (int)(rng_next() % (uint32_t)d->cfg.nx), (int)(rng_next() % (uint32_t)d->cfg.ny), 1.0f);
        } else if (key == '+' || key == '=' || key == '-') {
            float speed = d->info.speed + (key == '-' ? -0.05f : 0.05f);
            speed = speed > 0.70f ? 0.70f : speed < 0.05f ? 0.05f : speed;
            *s = timed(d, (command){.kind = CMD_SPEED, .value = speed}, NULL);
        } else if (key == '[' || key == ']') {
            float damping = key == ']' ? (d->info.damping ? d->info.damping * 2 : 0.0005f) : d->info.damping / 2;
            if (damping < 0.0005f && key == '[') damping = 0;
            if (damping > 0.2f) damping = 0.2f;
            *s = timed(d, (command){.kind = CMD_DAMPING, .value = damping}, NULL);
        }
    }
    return true;
}

static rk_status write_png(demo *d, uint64_t frame) {
    int w = d->cfg.nx > 1024 ? 1024 : d->cfg.nx, h = (int)((long long)w * d->cfg.ny / d->cfg.nx);
    uint8_t *rgb = malloc((size_t)w * h * 3);
    if (!rgb) return RK_OUT_OF_MEMORY;
    wave_render_rgb(d->field, d->cfg.nx, d->cfg.ny, d->scale, rgb, w, h);
    char path[4096];
    snprintf(path, sizeof path, "%s/wave_%05llu.png", d->png_dir, (unsigned long long)frame);
    bool ok = wave_png_write(path, rgb, w, h);
    free(rgb);
    if (!ok) {
        fprintf(stderr, "rk demo wave: cannot write %s: %s\n", path, strerror(errno));
        return RK_IO_ERROR;
    }
    return RK_OK;
}

static void draw_view(demo *d, uint64_t frame, float probe, double frame_us, uint64_t frame_cmds) {
    static text t;
    t.used = 0;
    int w = 0, h = 0;
    view_size(d->cfg.nx, d->cfg.ny, &w, &h);
    uint8_t *rgb = realloc(d->rgb, (size_t)w * h * 3);
    if (!rgb) return;
    d->rgb = rgb;
    wave_render_rgb(d->field, d->cfg.nx, d->cfg.ny, d->scale, rgb, w, h);
    put(&t, "\x1b[H");
    put(&t, " \x1b[1mrk demo wave\x1b[0m  %s pattern on %s (%s)  %d x %d grid\x1b[K\n", wave_pattern_name(d->info.pattern),
        d->info.backend, d->info.device, d->info.nx, d->info.ny);
    draw_picture(&t, rgb, w, h);
    put(&t, " frame %llu  steps %llu  speed %.2f  damping %.4f  probe u(centre) = %+.5f\x1b[K\n",
        (unsigned long long)frame, (unsigned long long)d->info.steps, (double)d->info.speed, (double)d->info.damping,
        (double)probe);
    put(&t, " this frame: %llu commands in %.0f us (%.1f%% of 16.7 ms)\x1b[K\n", (unsigned long long)frame_cmds,
        frame_us, frame_us / FRAME_BUDGET_US * 100);
    if (d->fit[WAVE_PERSISTENT] > 0)
        put(&t, " inject/step/query commands that fit in a 60 FPS frame:  persistent ~%.0f   traditional ~%.0f\x1b[K\n",
            d->fit[WAVE_PERSISTENT], d->fit[WAVE_TRADITIONAL]);
    else
        put(&t, " commands per 60 FPS frame: not measured (--no-calibrate)\x1b[K\n");
    put(&t, " keys: space drop   + - speed   [ ] damping   q quit\x1b[K\x1b[J");
    if (t.data) {
        fwrite(t.data, 1, t.used, stdout);
        fflush(stdout);
    }
}

static int run(demo *d) {
    size_t cells = (size_t)d->cfg.nx * (size_t)d->cfg.ny;
    d->field = malloc(cells * sizeof(float));
    if (!d->field) {
        fprintf(stderr, "rk demo wave: out of memory\n");
        return RK_EXIT_FAILURE;
    }
    uint64_t frame_ns = (uint64_t)(1e9 / d->fps), deadline = now_ns() + frame_ns;
    uint64_t per_line = d->frames > 10 ? d->frames / 10 : 1;
    double peak_seen = 0;
    rk_status s = drop(d, d->cfg.nx / 2, d->cfg.ny / 2, 1.0f); /* the first drop, in the middle */
    uint64_t frame = 0;
    for (; s == RK_OK && !interrupted && (d->frames == 0 || frame < d->frames); frame++) {
        uint64_t cmds0 = d->commands, ns0 = d->command_ns;
        if (d->tty && !handle_keys(d, &s)) break;
        /* rain: drops_per_second on average */
        if (s == RK_OK && (double)(rng_next() % 100000u) < d->drops_per_second / d->fps * 100000.0)
            s = drop(d, (int)(rng_next() % (uint32_t)d->cfg.nx), (int)(rng_next() % (uint32_t)d->cfg.ny),
                     0.4f + (float)(rng_next() % 600u) / 1000.0f);
        if (s == RK_OK && d->steps_per_frame) s = timed(d, (command){.kind = CMD_STEPS}, NULL);
        float probe = 0.0f;
        if (s == RK_OK) s = timed(d, (command){.kind = CMD_PROBE}, &probe);
        if (s == RK_OK) s = wave_read_field(d->sim, d->field, NULL);
        if (s != RK_OK) break;
        wave_sim_get_info(d->sim, &d->info);
        float peak = wave_peak(d->field, cells);
        if (!isfinite(peak)) {
            fprintf(stderr, "rk demo wave: the field is no longer finite at frame %llu\n", (unsigned long long)frame);
            return RK_EXIT_FAILURE;
        }
        peak_seen = fmax(peak_seen, peak);
        d->scale = fmaxf(0.05f, fmaxf(peak * 0.8f, d->scale * 0.97f));
        uint64_t frame_cmds = d->commands - cmds0;
        double frame_us = (double)(d->command_ns - ns0) / 1e3;
        if (d->png_dir && (s = write_png(d, frame)) != RK_OK) return RK_EXIT_FAILURE;
        if (d->tty) {
            draw_view(d, frame, probe, frame_us, frame_cmds);
        } else if (!d->quiet && (frame % per_line == 0 || frame + 1 == d->frames)) {
            printf("frame %4llu  steps %6llu  commands %llu in %7.1f us  probe %+.5f  peak %.4f\n",
                   (unsigned long long)frame, (unsigned long long)d->info.steps, (unsigned long long)frame_cmds,
                   frame_us, (double)probe, (double)peak);
        }
        uint64_t now = now_ns();
        if (now < deadline) sleep_until(deadline);
        deadline = now > deadline + frame_ns ? now + frame_ns : deadline + frame_ns; /* late: do not race to catch up */
    }
    if (d->tty) terminal_restore();
    if (s != RK_OK) {
        fprintf(stderr, "rk demo wave: %s: %s\n", rk_status_name(s), wave_last_error());
        return RK_EXIT_FAILURE;
    }
    printf("\nrk demo wave summary\n");
    printf("  pattern      %s on %s (%s), %d x %d grid, %u blocks x %u threads\n", wave_pattern_name(d->info.pattern),
           d->info.backend, d->info.device, d->info.nx, d->info.ny, d->info.blocks, d->info.threads);
    printf("  frames       %llu at %.0f fps, %llu time steps\n", (unsigned long long)frame, d->fps,
           (unsigned long long)d->info.steps);
    printf("  commands     %llu, mean %.2f us each (sent and completed)\n", (unsigned long long)d->commands,
           d->commands ? (double)d->command_ns / 1e3 / (double)d->commands : 0.0);
    char fit[2][32];
    for (int k = 0; k < 2; k++) {
        double f = d->fit[k ? WAVE_TRADITIONAL : WAVE_PERSISTENT];
        if (f > 0) snprintf(fit[k], sizeof fit[k], "~%.0f", f);
        else snprintf(fit[k], sizeof fit[k], "(not measured)");
    }
    printf("  per frame    persistent %s, traditional %s inject/step/query commands fit in 16.7 ms\n", fit[0], fit[1]);
    printf("  field        peak |u| %.4f, finite throughout%s%s\n", peak_seen, d->png_dir ? "; PNG frames in " : "",
           d->png_dir ? d->png_dir : "");
    return RK_EXIT_OK;
}

int rk_demo_wave(int argc, char **argv) {
    const char *backend = NULL, *pattern = "persistent", *png_dir = NULL;
    uint64_t size = 0, frames = 0, steps = 4, seed = 1;
    double fps = 60, speed = 0.5, damping = 0.002, drops = 2;
    bool no_tty = false, no_calibrate = false, quiet = false;
    const cli_opt opts[] = {
        {"pattern", 'p', CLI_STRING, &pattern, "NAME", "persistent (default), traditional or graph", 0, 0},
        {"backend", 'b', CLI_STRING, &backend, "NAME", "device: cpu (default, or RK_BACKEND), cuda, cuda:1", 0, 0},
        {"size", 0, CLI_UINT, &size, "N", "grid of N x N cells (default 256 on the CPU, 512 on a GPU)", 0, 16384},
        {"frames", 'n', CLI_UINT, &frames, "N", "stop after N frames (default: until q; 120 with --no-tty)", 0, 0},
        {"fps", 0, CLI_DOUBLE, &fps, "F", "frames per second (default 60)", 1, 1000},
        {"steps-per-frame", 0, CLI_UINT, &steps, "N", "time steps per frame (default 4)", 1, 100000},
        {"speed", 0, CLI_DOUBLE, &speed, "C", "wave speed, Courant number up to 0.707 (default 0.5)", 0.001, 0.7071},
        {"damping", 0, CLI_DOUBLE, &damping, "D", "damping per step, 0 to 0.99 (default 0.002)", 0, 0.99},
        {"drops", 0, CLI_DOUBLE, &drops, "R", "rain drops per second (default 2)", 0, 1000},
        {"seed", 0, CLI_UINT, &seed, "N", "rain seed (default 1)", 0, 0},
        {"png", 0, CLI_STRING, &png_dir, "DIR", "write every frame to DIR/wave_NNNNN.png", 0, 0},
        {"no-tty", 0, CLI_FLAG, &no_tty, NULL, "no terminal view: a line every few frames (for CI)", 0, 0},
        {"no-calibrate", 0, CLI_FLAG, &no_calibrate, NULL, "skip measuring both patterns at the start", 0, 0},
        {"quiet", 'q', CLI_FLAG, &quiet, NULL, "only the summary", 0, 0},
    };
    const cli_command_spec spec = {
        .name = "demo wave",
        .synopsis = "[options]",
        .summary = "A 2-D wave simulation held on the device (the rk_sim API), driven by commands\n"
                   "(drop an impulse, set the speed or damping, step, query a cell) through a\n"
                   "persistent kernel that polls host-mapped memory, or --pattern traditional: a\n"
                   "launch per command (graph: replayed from CUDA graphs). Live terminal view at a\n"
                   "steady frame rate, PNG frames with --png.\n"
                   "Before it starts, both patterns are timed on the same grid so the view can show\n"
                   "how many commands each fits in a 60 FPS frame.",
        .opts = opts,
        .opt_count = sizeof opts / sizeof opts[0],
    };
    switch (cli_parse(&spec, argc, argv, NULL, NULL)) {
    case CLI_PARSE_HELP: return RK_EXIT_OK;
    case CLI_PARSE_ERROR: return RK_EXIT_USAGE;
    case CLI_PARSE_OK: break;
    }
    demo d;
    memset(&d, 0, sizeof d);
    wave_pattern p;
    if (!wave_pattern_parse(pattern, &p))
        return cli_usage_error(spec.name, "--pattern '%s' is not persistent, traditional or graph", pattern);
    if (size && (size < 8 || size > 16384)) return cli_usage_error(spec.name, "--size %llu is not 8 to 16384", (unsigned long long)size);
    if (!backend) backend = getenv("RK_BACKEND");
    if (!backend || !*backend) backend = "cpu";
    const rk_backend *b = NULL;
    uint32_t dev = 0;
    rk_status s = rk_select_device(backend, &b, &dev);
    if (s != RK_OK) {
        cli_report_status(spec.name, "choosing the device", s);
        return cli_exit_for_selection(s);
    }
    bool cpu = strcmp(rk_backend_name(b), "cpu") == 0;
    int n = size ? (int)size : cpu ? 256 : 512;
    d.cfg = (wave_config){.device = backend, .pattern = p, .nx = n, .ny = n, .speed = (float)speed,
                          .damping = (float)damping};
    d.tty = !no_tty && isatty(STDOUT_FILENO);
    d.quiet = quiet;
    d.frames = frames ? frames : d.tty ? 0 : 120;
    d.fps = fps;
    d.steps_per_frame = steps;
    d.drops_per_second = drops;
    d.png_dir = png_dir;
    rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
    if (png_dir && mkdir(png_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "rk demo wave: cannot create %s: %s\n", png_dir, strerror(errno));
        return RK_EXIT_FAILURE;
    }

    if (!no_calibrate) {
        /* One pattern at a time, before the simulation starts: a spinning
         * persistent kernel would slow the other, and on CUDA a module load
         * pauses every running one. */
        for (int k = WAVE_PERSISTENT; k <= WAVE_TRADITIONAL; k++) {
            double mean_us = 0;
            if (!quiet) fprintf(stderr, "rk demo wave: timing the %s pattern...\n", wave_pattern_name((wave_pattern)k));
            s = calibrate(&d.cfg, (wave_pattern)k, cpu ? 300 : 1500, &mean_us);
            if (s != RK_OK) break;
            d.fit[k] = FRAME_BUDGET_US / mean_us;
        }
    }
    if (s == RK_OK) s = wave_sim_create(&d.cfg, &d.sim);
    if (s != RK_OK) {
        fprintf(stderr, "rk demo wave: %s: %s\n", rk_status_name(s), wave_last_error());
        return s == RK_BACKEND_UNAVAILABLE || s == RK_NO_DEVICE ? RK_EXIT_UNAVAILABLE : RK_EXIT_FAILURE;
    }
    wave_sim_get_info(d.sim, &d.info);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    if (d.tty) terminal_start();
    int rc = run(&d);
    if (d.tty) terminal_restore();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    s = wave_sim_destroy(d.sim);
    if (s != RK_OK) {
        fprintf(stderr, "rk demo wave: stopping: %s: %s\n", rk_status_name(s), wave_last_error());
        rc = RK_EXIT_FAILURE;
    }
    free(d.field);
    free(d.rgb);
    return rc;
}
