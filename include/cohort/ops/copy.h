// Copies whose gradient crosses devices. (clone, contiguous, to and copy_ are Tensor methods and
// creation functions; see tensor.h and creation.h.)
#pragma once

#include "cohort/core/tensor.h"

namespace cohort {

// Links `replica`, which already holds master's values (on its own device, possibly sharing
// master's storage), to master in place: afterwards replica is a non-leaf whose gradient flows to
// master, converted to master's device and dtype (node "BroadcastBackward"). Nothing is copied.
// DataParallel links each replica parameter to the module's this way every step. Does nothing when
// grad mode is off or master does not require grad. Throws cohort::Error naming the op when the
// shapes differ or replica is a leaf that requires grad.
void broadcast_link_(const Tensor& replica, const Tensor& master);

// x's memory seen as a tensor of another CPU device, without a copy (CPU devices share one address
// space: Note [Storage aliases] in src/core/storage.cpp): same dtype, shape, strides and bytes;
// in-place writes through either are writes to both and count on one version counter. Not
// recorded by autograd (the result requires no grad). Returns x itself when it is on `device`.
// For what must not be copied between devices: DataParallel's replica parameters, which the
// replicas only read, and their gradients on the way back to the master.
Tensor alias_on(const Tensor& x, Device device);

}  // namespace cohort
