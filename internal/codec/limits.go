package codec

// Upper bounds on the numbers HAMi's annotations carry. They are far above any real GPU (the largest today
// has under 2^18 MiB) and low enough that the engine's sums over a node's GPUs, a pod's containers and a
// namespace's pods can never wrap an int64: a value above them is refused with an error naming the field,
// so a forged annotation cannot turn a full GPU into a free one.
const (
	// MaxMemMiB bounds one GPU's registered memory and one device entry's memory (2^40 MiB = 1 EiB).
	MaxMemMiB int64 = 1 << 40
	// MaxCores bounds one GPU's registered cores and one device entry's cores (HAMi registers 100 x scaling).
	MaxCores int64 = 1 << 20
	// MaxSlots bounds one GPU's registered split count.
	MaxSlots int64 = 1 << 20
)
