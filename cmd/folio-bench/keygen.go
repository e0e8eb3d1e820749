package main

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// The request distributions of YCSB's core workloads (Gray et al., "Quickly
// Generating Billion-Record Synthetic Databases", as YCSB implements them in
// site.ycsb.generator).

// zipfianConstant is YCSB's default skew.
const zipfianConstant = 0.99

// scrambledItems and scrambledZetan are the item count of the zipfian
// generator behind YCSB's scrambled zipfian, and its precomputed zeta.
const (
	scrambledItems = 10_000_000_000
	scrambledZetan = 26.46902820178302
)

// fnv64 is YCSB's Utils.fnvhash64: FNV-1 over the eight bytes of v, low byte
// first, made non-negative.
func fnv64(v int64) int64 {
	h := int64(-3750763034362895579) // 0xCBF29CE484222325
	for range 8 {
		h ^= v & 0xff
		v >>= 8
		h *= 1099511628211
	}
	if h < 0 {
		h = -h
	}
	return h
}

// ycsbKey is the key of record n: "user" followed by the hash of n, as YCSB
// names records when inserts are hashed (its default).
func ycsbKey(n int64) string { return "user" + strconv.FormatInt(fnv64(n), 10) }

// zeta returns initial + sum of 1/i^theta for i in (from, to].
func zeta(from, to int64, theta, initial float64) float64 {
	sum := initial
	for i := from; i < to; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// zipfian draws integers in [0, n) with P(i) proportional to 1/(i+1)^theta,
// item 0 the most popular. n may grow between draws (the zeta sum is then
// extended incrementally). It is not safe for concurrent use.
type zipfian struct {
	theta, alpha, zeta2, zetan, eta float64
	n                               int64 // the item count zetan is for
}

// newZipfian returns a generator over n items with YCSB's constant.
func newZipfian(n int64) *zipfian {
	return newZipfianZeta(n, zeta(0, n, zipfianConstant, 0))
}

// newZipfianZeta returns a generator over n items whose zeta sum is known.
func newZipfianZeta(n int64, zetan float64) *zipfian {
	z := &zipfian{theta: zipfianConstant, n: n, zetan: zetan}
	z.alpha = 1 / (1 - z.theta)
	z.zeta2 = zeta(0, 2, z.theta, 0)
	z.setEta()
	return z
}

func (z *zipfian) setEta() {
	z.eta = (1 - math.Pow(2/float64(z.n), 1-z.theta)) / (1 - z.zeta2/z.zetan)
}

// next draws from [0, n); n must not be smaller than any n used before.
func (z *zipfian) next(r *rand.Rand, n int64) int64 {
	if n > z.n {
		z.zetan = zeta(z.n, n, z.theta, z.zetan)
		z.n = n
		z.setEta()
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return 1
	}
	return min(int64(float64(n)*math.Pow(z.eta*u-z.eta+1, z.alpha)), n-1)
}

// scrambled is YCSB's scrambled zipfian: zipfian popularity, with the
// popular items spread over the key space by hashing rather than clustered
// at its start.
type scrambled struct{ z *zipfian }

func newScrambled() scrambled {
	return scrambled{newZipfianZeta(scrambledItems, scrambledZetan)}
}

// next draws a record number in [0, n).
func (s scrambled) next(r *rand.Rand, n int64) int64 {
	return fnv64(s.z.next(r, scrambledItems)) % n
}

// latest is YCSB's skewed-latest distribution: the most recently inserted
// records are the most popular.
type latest struct{ z *zipfian }

// next draws a record number in [0, last], last being the newest record.
func (l latest) next(r *rand.Rand, last int64) int64 {
	return last - l.z.next(r, last+1)
}
