/*===- NNXSanitizerPrelude.h - included first by the sanitizer build ------===*
 *
 * NNX_ENABLE_SANITIZERS compiles nnx with ASan, but libLLVM.so and
 * libMLIR.so are Debian's, without it. LLVM's allocators (Allocator.h,
 * Recycler.h, ArrayRecycler.h) are inline code that, compiled with ASan,
 * poisons a new slab or a recycled node and unpoisons each allocation it hands
 * out; the copies of the same code inside libMLIR.so do neither. An
 * allocator shared by both (the context's storage uniquer, an operation's
 * operand storage) then hands libMLIR a chunk of a slab that nnx's code
 * poisoned, and the first instrumented access to it is reported as
 * use-after-poison although the memory is live. Making these two calls no-ops
 * in nnx's translation units keeps heap checking of every malloc'ed block and
 * gives up only the use-after-free checks inside LLVM's arenas, which the
 * uninstrumented libraries could not keep consistent anyway.
 *
 *===----------------------------------------------------------------------===*/
#ifndef NNX_SANITIZER_PRELUDE_H
#define NNX_SANITIZER_PRELUDE_H

#include <sanitizer/asan_interface.h>

#define __asan_poison_memory_region(addr, size) ((void)(addr), (void)(size))
#define __asan_unpoison_memory_region(addr, size) ((void)(addr), (void)(size))

#endif /* NNX_SANITIZER_PRELUDE_H */
