package http1

// SubmitOnLoop runs fn on loop i of the started server s: a test holds
// the loop busy with it.
func SubmitOnLoop(s *Server, i int, fn func()) error { return s.srv.Submit(i, fn) }
