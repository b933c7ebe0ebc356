/* rk's JSON reports keep every double exactly (a figure such as 1.23456789 us
 * must not come back as 1.23457), and write a non-finite one as null. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "output.h"

int main(void) {
    static const double values[] = {0.1, 1.0 / 3.0, 1.23456789, 123456789.125, -2.5e-300, 1e300, 42.0};
    enum { N = sizeof values / sizeof values[0] };
    char text[1024] = "";
    FILE *f = tmpfile();
    CHECK(f != NULL);
    json_writer j;
    json_init(&j, f);
    json_array_begin(&j);
    for (int i = 0; i < N; i++) json_double(&j, values[i]);
    json_double(&j, NAN);
    json_double(&j, INFINITY);
    json_array_end(&j);
    json_finish(&j);
    rewind(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = '\0';

    /* Read the numbers back in order: each must be the same double. */
    char *p = strchr(text, '[');
    CHECK(p != NULL);
    p++;
    for (int i = 0; i < N; i++) {
        char *end = NULL;
        double back = strtod(p, &end);
        CHECK(end != p);
        if (back != values[i]) {
            fprintf(stderr, "value %d: wrote %.17g, read back %.17g (%s)\n", i, values[i], back, text);
            return 1;
        }
        p = strchr(end, ',');
        CHECK(p != NULL);
        p++;
    }
    CHECK(strstr(p, "null") != NULL);                       /* NAN */
    CHECK(strstr(strstr(p, "null") + 4, "null") != NULL);   /* infinity */
    CHECK(strstr(text, "42") != NULL && strstr(text, "42.0000") == NULL); /* short where exact */
    printf("PASS: %d doubles read back exactly, non-finite ones null\n", N);
    return 0;
}
