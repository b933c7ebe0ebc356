# Summarizes a traced `rk bench k2k` (RK_CUDA_RING_DEFINES=RK_LEAN_TRACE,
# src/device/cuda/channel_solo.cu): awk -f scripts/k2k-hop-trace.awk LOG
# The chain's stages are ordered by their rings ("rk-lt exit" lines: the
# source has no input; each next stage's input is the output before it).
# The source's planned host passes (its "in" ring is 0) are recorded as
# found at the host poll and finished when its emit was stored.
# For each stage with a lean loop, medians over its one-message passes:
# the finding poll's round trip, found -> finish (handler, emit, replies,
# rk_emit_finish), finish -> the next plan armed, the poll period and the
# empty polls before a message. For each hop between two traced stages,
# medians over the messages both passed: the next stage's finding poll
# issued after the emit's finish (negative: before), found after it, and
# the device hop (finish to finish). Clock figures in cycles, the rest in
# ns (%globaltimer, 32 ns steps on the H100).
function median(a, n,    i, j, t) {
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && a[j - 1] > a[j]; j--) {t = a[j]; a[j] = a[j - 1]; a[j - 1] = t}
    return n ? a[int(n / 2)] : -1
}
BEGIN {nk = 0}
$1 == "rk-lt" && $2 == "exit" && ($6 != "0" || $8 != "0") && nk < 4 {ksm[nk] = $4; kin[nk] = $6; kout[nk] = $8; nk++}
# rk-lt IN SM SEQ N ARMED GI GF GN CF CH CN CPLAN EMPTY WINDOW PERIOD
$1 == "rk-lt" && $2 != "exit" && $2 != "kernel" && NF == 16 && $5 == 1 {
    k = $2 SUBSEP $4
    if (!(k in gi) || $7 < gi[k]) {
        gi[k] = $7; gf[k] = $8; gn[k] = $9; cf[k] = $10; ch[k] = $11; cn[k] = $12; cp[k] = $13
        em[k] = $14; per[k] = $16; seqs[$4] = 1
    }
}
END {
    c = -1
    for (i = 0; i < nk; i++) if (kin[i] == "0") c = i
    ns = 0
    for (h = 0; h < 4 && c >= 0; h++) {
        order[ns] = kin[c]; osm[ns] = ksm[c]; ns++
        x = -1
        for (i = 0; i < nk; i++) if (kin[i] == kout[c] && kout[c] != "0") x = i
        c = x
    }
    printf "trace: %d kernels of the chain, SMs", ns
    for (s = 0; s < ns; s++) printf " %s", osm[s]
    printf "\n"
    for (s = 0; s < ns; s++) {
        n = 0
        for (q in seqs) {
            k = order[s] SUBSEP q
            if (!(k in gi)) continue
            a1[n] = cf[k]; a2[n] = cn[k] - cf[k]; a3[n] = cp[k] - cn[k]; a4[n] = per[k]; a5[n] = em[k]; a6[n] = ch[k] - cf[k]
            n++
        }
        if (!n) continue
        printf "trace: stage %d (SM %s): %d passes; finding poll %d cycles, found->handled %d, found->finish %d, " \
               "finish->armed %d, poll period %d, empty polls %d\n", s, osm[s], n, median(a1, n), median(a6, n),
               median(a2, n), median(a3, n), median(a4, n), median(a5, n)
    }
    for (s = 0; s + 1 < ns; s++) {
        n = 0
        for (q in seqs) {
            k0 = order[s] SUBSEP q; k1 = order[s + 1] SUBSEP q
            if (!(k0 in gi) || !(k1 in gi)) continue
            fin = gi[k0] + gn[k0]
            if (gi[k1] + gf[k1] - fin > 100000 || gi[k1] + gf[k1] < fin - 100000) continue
            b1[n] = gi[k1] - fin; b2[n] = gi[k1] + gf[k1] - fin; b3[n] = gi[k1] + gn[k1] - fin
            n++
        }
        if (!n) continue
        printf "trace: hop %d->%d (SM %s -> %s): %d messages; next poll issued %d ns after the finish, found %d ns " \
               "after it, its finish %d ns after it (the device hop)\n", s, s + 1, osm[s], osm[s + 1], n,
               median(b1, n), median(b2, n), median(b3, n)
    }
}
