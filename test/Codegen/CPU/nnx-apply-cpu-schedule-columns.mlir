// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=512" | FileCheck %s --check-prefix=AVX512
// RUN: nnx-opt %s -split-input-file --nnx-apply-cpu-schedule="stage=tile-matmul vector-bits=256" | FileCheck %s --check-prefix=AVX2

// A static N that is not whole cache tiles (128) is split into column
// blocks before the cache stage: 168 = 128 + 32 + 8. Each block's tiles are
// static and vectorized (the 40 columns left by a 128 tile would be a
// dynamic tile: scalar code); under AVX-512 no register tile is 40 wide
// (not a power of two), under AVX2 the 40 are 32 (two 16-wide tiles) and 8.
// AVX512-LABEL: func.func @n168(
// AVX512:         tensor.extract_slice %{{.*}}[0, 0] [64, 128] [1, 1] : tensor<64x168xf32> to tensor<64x128xf32>
// AVX512:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x64xf32> into vector<6x64xf32>
// AVX512:         tensor.insert_slice %{{.*}}[0, 0] [64, 128] [1, 1] : tensor<64x128xf32> into tensor<64x168xf32>
// AVX512:         tensor.extract_slice %{{.*}}[0, 128] [64, 32] [1, 1] : tensor<64x168xf32> to tensor<64x32xf32>
// AVX512:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x32xf32> into vector<6x32xf32>
// AVX512:         tensor.extract_slice %{{.*}}[0, 160] [64, 8] [1, 1] : tensor<64x168xf32> to tensor<64x8xf32>
// AVX512:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x8xf32> into vector<6x8xf32>
// AVX512-NOT:     linalg.matmul
// AVX512:         return
// AVX2-LABEL: func.func @n168(
// AVX2:           vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2:           tensor.extract_slice %{{.*}}[0, 128] [64, 32] [1, 1] : tensor<64x168xf32> to tensor<64x32xf32>
// AVX2:           vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2:           tensor.extract_slice %{{.*}}[0, 160] [64, 8] [1, 1] : tensor<64x168xf32> to tensor<64x8xf32>
// AVX2:           vector.contract {{.*}} : vector<6x1xf32>, vector<1x8xf32> into vector<6x8xf32>
// AVX2-NOT:       linalg.matmul
// AVX2:           return
func.func @n168(%a: tensor<64x64xf32>, %b: tensor<64x168xf32>, %c: tensor<64x168xf32>) -> tensor<64x168xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x168xf32>) outs(%c : tensor<64x168xf32>) -> tensor<64x168xf32>
  return %r : tensor<64x168xf32>
}

// -----

// A group of 48 output channels (RegNetX-3.2GF): 32 + 16 columns, not one
// 48-wide register tile.
// AVX512-LABEL: func.func @n48(
// AVX512:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x32xf32> into vector<6x32xf32>
// AVX512:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX512-NOT:     vector<6x48xf32>
// AVX512:         return
func.func @n48(%a: tensor<12x48xf32>, %b: tensor<48x48xf32>, %c: tensor<12x48xf32>) -> tensor<12x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<12x48xf32>, tensor<48x48xf32>) outs(%c : tensor<12x48xf32>) -> tensor<12x48xf32>
  return %r : tensor<12x48xf32>
}

// -----

// Whole cache tiles, or a power of two below one, are left as they are.
// AVX512-LABEL: func.func @n256(
// AVX512-NOT:     tensor.extract_slice %{{.*}}[0, 128] [12, 128]
// AVX512:         vector.contract {{.*}} into vector<6x64xf32>
// AVX512-LABEL: func.func @n32(
// AVX512-NOT:     tensor.extract_slice %{{.*}}[0, 0] [12, 16]
// AVX512:         vector.contract {{.*}} into vector<6x32xf32>
func.func @n256(%a: tensor<12x48xf32>, %b: tensor<48x256xf32>, %c: tensor<12x256xf32>) -> tensor<12x256xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<12x48xf32>, tensor<48x256xf32>) outs(%c : tensor<12x256xf32>) -> tensor<12x256xf32>
  return %r : tensor<12x256xf32>
}
func.func @n32(%a: tensor<12x48xf32>, %b: tensor<48x32xf32>, %c: tensor<12x32xf32>) -> tensor<12x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<12x48xf32>, tensor<48x32xf32>) outs(%c : tensor<12x32xf32>) -> tensor<12x32xf32>
  return %r : tensor<12x32xf32>
}
