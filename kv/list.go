package kv

import "github.com/evloop/evloop/resp"

// list is a list value.
type list struct{}

func (o *list) clone() *list { panic("kv: list.clone") }

func (o *list) rewrite(w *resp.Writer, key []byte) { panic("kv: list.rewrite") }
