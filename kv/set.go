package kv

import "github.com/evloop/evloop/resp"

// set is a set value.
type set struct {
	members *dict[struct{}]
}

func (s *set) encoding() string { return "hashtable" }

func (o *set) clone() *set { panic("kv: set.clone") }

func (o *set) rewrite(w *resp.Writer, key []byte) { panic("kv: set.rewrite") }
