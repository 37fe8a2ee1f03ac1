"""The core: Tensor, the Op contract, autograd, specs, random numbers and tensor factories."""
