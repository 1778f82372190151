/* One core's f32 FMA peak: 12 independent chains of vector FMAs (enough to
 * cover the FMA latency on two pipes), at the widest vector width the
 * compiler targets with -march=native (AVX-512, else AVX2 + FMA). Prints
 * GFLOP/s (2 per lane per FMA). Built and run by bench/cpu_vs_torch.py. */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ISA "AVX-512"
#elif defined(__FMA__) && defined(__AVX2__)
typedef __m256 vec;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ISA "AVX2"
#else
#error "fma_peak.c needs AVX2 + FMA or AVX-512"
#endif

#define CHAINS 12

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  vec acc[CHAINS];
  vec b = SET1(1.0000001f), c = SET1(1e-7f);
  for (int i = 0; i < CHAINS; ++i)
    acc[i] = SET1((float)i);
  const long iterations = 100000000;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    double start = now();
    for (long j = 0; j < iterations; ++j) {
      for (int i = 0; i < CHAINS; ++i)
        acc[i] = FMA(acc[i], b, c);
      __asm__ volatile("" : "+v"(acc[0]));
    }
    double gflops = iterations * CHAINS * LANES * 2.0 / (now() - start) / 1e9;
    if (gflops > best)
      best = gflops;
  }
  float sink[LANES];
  vec sum = acc[0];
  for (int i = 1; i < CHAINS; ++i)
    sum = FMA(sum, b, acc[i]);
  __builtin_memcpy(sink, &sum, sizeof(sink));
  printf("%s %.2f %g\n", ISA, best, (double)sink[0]);
  return 0;
}
