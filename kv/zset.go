package kv

import "github.com/evloop/evloop/resp"

// zset is a sorted set value.
type zset struct{}

func (o *zset) clone() *zset { panic("kv: zset.clone") }

func (o *zset) rewrite(w *resp.Writer, key []byte) { panic("kv: zset.rewrite") }
