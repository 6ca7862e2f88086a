// autotuned: the bank-conflict-free kernel at a block tile chosen by search on the GPU at hand.
//
// Nothing changes in the code; what changes is the shape. `roofline tune` compiles, verifies and
// times every valid (BM, BN, BK, TM, TN) of bank_conflict_free_tile (threads = BM*BN / (TM*TN),
// 64..1024, at most 48 KB of shared memory) and records the winner per GPU; the ladder then runs
// this kernel at that shape. A rectangular tile costs GMEM traffic (K(1/BM + 1/BN) is smallest
// for a square) but may buy occupancy, fewer partial waves over the SMs, or cheaper loads.
//
// Launch: block (BM * BN / (TM * TN)), grid (ceil(N / BN), ceil(M / BM)).
#include "bank_conflict_free.cu"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
autotuned(int M, int N, int K, float alpha, const float* __restrict__ A,
          const float* __restrict__ B, float beta, float* __restrict__ C) {
    bank_conflict_free_tile<BM, BN, BK, TM, TN>(M, N, K, alpha, A, B, beta, C);
}
