package partition

// For returns the partition the default (Kafka-compatible)
// partitioner picks for key among n partitions: where a producer keyed by run
// id puts a run's records. It is the Java client's DefaultPartitioner and
// franz-go's StickyKeyPartitioner for keyed records (murmur2, sign bit
// masked, modulo n), computed without building a partitioner per call: it
// runs for every record appended and every run id placed (a test checks it
// against franz-go's).
func For(key string, n int) int32 {
	return int32(int(murmur2(key)&0x7fffffff) % n)
}

// murmur2 is Kafka's murmur2 hash (seed 0x9747b28c).
func murmur2(b string) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	h := seed ^ uint32(len(b))
	for len(b) >= 4 {
		k := uint32(b[3])<<24 | uint32(b[2])<<16 | uint32(b[1])<<8 | uint32(b[0])
		b = b[4:]
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		h ^= uint32(b[1]) << 8
		h ^= uint32(b[0])
		h *= m
	case 2:
		h ^= uint32(b[1]) << 8
		h ^= uint32(b[0])
		h *= m
	case 1:
		h ^= uint32(b[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
