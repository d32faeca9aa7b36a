package kv

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// redisPool is Redis 7.0's eviction pool, its insertion as
// evictionPoolPopulate makes it, in Go.
type redisPool struct {
	key  [evictPoolSize]*string
	idle [evictPoolSize]uint64
}

func (p *redisPool) insert(idle uint64, key string) {
	k := 0
	for k < evictPoolSize && p.key[k] != nil && p.idle[k] < idle {
		k++
	}
	if k == 0 && p.key[evictPoolSize-1] != nil {
		return
	} else if k < evictPoolSize && p.key[k] == nil {
	} else {
		if p.key[evictPoolSize-1] == nil {
			copy(p.key[k+1:], p.key[k:evictPoolSize-1])
			copy(p.idle[k+1:], p.idle[k:evictPoolSize-1])
		} else {
			k--
			copy(p.key[:k], p.key[1:k+1])
			copy(p.idle[:k], p.idle[1:k+1])
		}
	}
	p.key[k], p.idle[k] = &key, idle
}

func (p *redisPool) take() string {
	for k := evictPoolSize - 1; k >= 0; k-- {
		if p.key[k] != nil {
			s := *p.key[k]
			p.key[k] = nil
			return s
		}
	}
	return "-"
}

// The pool takes candidates as Redis's evictionPoolPopulate does, over
// random inserts and takes, a key named "" among them.
func TestEvictionPoolAsRedis(t *testing.T) {
	for seed := range uint64(2000) {
		r := rand.New(rand.NewPCG(seed, 1))
		var ev eviction
		var rp redisPool
		for step := range 200 {
			if r.IntN(4) == 0 {
				got := "-"
				for k := evictPoolSize - 1; k >= 0; k-- {
					if c := &ev.pool[k]; c.used {
						got = c.key
						c.key, c.used = "", false
						break
					}
				}
				if want := rp.take(); got != want {
					t.Fatalf("seed %d step %d: took %q; Redis's pool %q", seed, step, got, want)
				}
				continue
			}
			score := uint64(r.IntN(20))
			key := "k" + strconv.Itoa(r.IntN(30))
			if r.IntN(10) == 0 {
				key = "" // a key may be named ""
			}
			ev.insertCandidate(score, 0, key)
			rp.insert(score, key)
			for k := range evictPoolSize {
				c := ev.pool[k]
				if c.used != (rp.key[k] != nil) || c.used && (c.key != *rp.key[k] || c.score != rp.idle[k]) {
					t.Fatalf("seed %d step %d: pool[%d] = %v %q/%d; Redis's %v", seed, step, k, c.used, c.key, c.score, rp.key[k] != nil)
				}
			}
		}
	}
}
