/* One core's f32 FMA peak, for every vector width this CPU runs (detected at
 * run time, so any x86-64 compiler and no -march flag are needed): AVX-512
 * (16 lanes) and AVX2 + FMA (8 lanes). Each kernel runs CHAINS independent
 * chains of vector FMAs, enough to cover the FMA latency on two pipes (4
 * cycles x 2 pipes = 8 in flight), held in named local variables: an array
 * of accumulators indexed in a loop is kept in memory by GCC at -O2 (a load
 * and a store per FMA), which measured a third of the peak.
 *
 * Prints one line per width, "ISA GFLOP/s checksum" (2 flops per lane per
 * FMA, the best of 3 rounds), and last "peak ISA GFLOP/s" for the fastest.
 * Built and run by bench/cpu_vs_torch.py, which checks the peak against a
 * large sgemm measured in the same run. */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#define ITERATIONS 50000000L
#define CHAINS 12

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One round: ITERATIONS x CHAINS FMAs of VEC (LANES lanes); the chains are
 * summed into *checksum so that none is dead. */
#define KERNEL(NAME, TARGET, VEC, LANES, SET1, FMA, ADD, STORE)              \
  __attribute__((target(TARGET), noinline)) static double NAME(               \
      float *checksum) {                                                     \
    VEC b = SET1(1.0000001f), c = SET1(1e-7f);                               \
    VEC a0 = SET1(0), a1 = SET1(1), a2 = SET1(2), a3 = SET1(3);              \
    VEC a4 = SET1(4), a5 = SET1(5), a6 = SET1(6), a7 = SET1(7);              \
    VEC a8 = SET1(8), a9 = SET1(9), a10 = SET1(10), a11 = SET1(11);          \
    double start = now();                                                    \
    for (long j = 0; j < ITERATIONS; ++j) {                                  \
      a0 = FMA(a0, b, c), a1 = FMA(a1, b, c), a2 = FMA(a2, b, c);            \
      a3 = FMA(a3, b, c), a4 = FMA(a4, b, c), a5 = FMA(a5, b, c);            \
      a6 = FMA(a6, b, c), a7 = FMA(a7, b, c), a8 = FMA(a8, b, c);            \
      a9 = FMA(a9, b, c), a10 = FMA(a10, b, c), a11 = FMA(a11, b, c);        \
    }                                                                        \
    double seconds = now() - start;                                          \
    VEC sum = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))); \
    sum = ADD(sum, ADD(ADD(a8, a9), ADD(a10, a11)));                         \
    float lanes[LANES];                                                      \
    STORE(lanes, sum);                                                       \
    *checksum = lanes[0];                                                    \
    return ITERATIONS * CHAINS * LANES * 2.0 / seconds / 1e9;                \
  }

KERNEL(avx512, "avx512f", __m512, 16, _mm512_set1_ps, _mm512_fmadd_ps,
       _mm512_add_ps, _mm512_storeu_ps)
KERNEL(avx2, "avx2,fma", __m256, 8, _mm256_set1_ps, _mm256_fmadd_ps,
       _mm256_add_ps, _mm256_storeu_ps)

typedef double (*Kernel)(float *);

static double best_of_3(Kernel kernel, float *checksum) {
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    double gflops = kernel(checksum);
    if (gflops > best)
      best = gflops;
  }
  return best;
}

int main(void) {
  __builtin_cpu_init();
  struct {
    const char *isa;
    int supported;
    Kernel kernel;
  } widths[] = {
      {"AVX-512", __builtin_cpu_supports("avx512f"), avx512},
      {"AVX2", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
       avx2},
  };
  const char *peakIsa = 0;
  double peak = 0;
  for (unsigned i = 0; i < sizeof(widths) / sizeof(widths[0]); ++i) {
    if (!widths[i].supported)
      continue;
    float checksum = 0;
    double gflops = best_of_3(widths[i].kernel, &checksum);
    printf("%s %.2f %g\n", widths[i].isa, gflops, (double)checksum);
    if (gflops > peak) {
      peak = gflops;
      peakIsa = widths[i].isa;
    }
  }
  if (!peakIsa) {
    fprintf(stderr, "fma_peak: this CPU has neither AVX2 + FMA nor AVX-512\n");
    return 1;
  }
  printf("peak %s %.2f\n", peakIsa, peak);
  return 0;
}
