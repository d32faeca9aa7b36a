package kv

import "github.com/evloop/evloop/resp"

// hash is a hash value.
type hash struct{}

func (o *hash) clone() *hash { panic("kv: hash.clone") }

func (o *hash) rewrite(w *resp.Writer, key []byte) { panic("kv: hash.rewrite") }
