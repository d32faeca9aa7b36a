package kv

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// tlsConfig builds the TLS listeners' configuration from the Config's
// files, as Redis reads tls-cert-file, tls-key-file, tls-ca-cert-file and
// tls-auth-clients; nil without a TLSPort.
func tlsConfig(cfg Config) (*tls.Config, error) {
	if cfg.TLSPort == 0 {
		return nil, nil
	}
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
		return nil, errors.New("tls-port needs tls-cert-file and tls-key-file")
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls-cert-file, tls-key-file: %w", err)
	}
	config := &tls.Config{Certificates: []tls.Certificate{cert}}
	switch strings.ToLower(cfg.TLSAuthClients) {
	case "yes":
		config.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		config.ClientAuth = tls.VerifyClientCertIfGiven
	case "no":
		return config, nil
	default:
		return nil, fmt.Errorf("bad tls-auth-clients %q: want yes, no or optional", cfg.TLSAuthClients)
	}
	if cfg.TLSCACertFile == "" {
		// As Redis, which needs authorities to check clients against.
		return nil, errors.New("tls-auth-clients needs tls-ca-cert-file (or tls-auth-clients no)")
	}
	pem, err := os.ReadFile(cfg.TLSCACertFile)
	if err != nil {
		return nil, fmt.Errorf("tls-ca-cert-file: %w", err)
	}
	config.ClientCAs = x509.NewCertPool()
	if !config.ClientCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls-ca-cert-file %q: no PEM certificate in it", cfg.TLSCACertFile)
	}
	return config, nil
}

// useTLS makes config the TLS listeners' from the next handshake on. The
// listeners hold one configuration, which hands out the current one, so
// that CONFIG SET's new certificate serves without listening again.
func (s *Server) useTLS(config *tls.Config) {
	s.tlsCur.Store(config)
	if s.tls == nil {
		s.tls = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return s.tlsCur.Load(), nil
		}}
	}
}

// tlsParams are the TLS settings. CONFIG SET changes them as Redis's
// does: each is taken, and once all of a CONFIG SET's are, applyTLS reads
// the files and moves the TLS listeners, all or nothing.
var tlsParams = []configParam{
	{"tls-port", func(s *Server) string { return fmt.Sprint(s.cfg.TLSPort) }, func(s *Server, v string) error {
		n, err := intParam(v, 0, 65535)
		if err == nil {
			s.cfg.TLSPort = int(n)
			s.tlsDirty.port = true
		}
		return err
	}},
	tlsFileParam("tls-cert-file", func(c *Config) *string { return &c.TLSCertFile }),
	tlsFileParam("tls-key-file", func(c *Config) *string { return &c.TLSKeyFile }),
	tlsFileParam("tls-ca-cert-file", func(c *Config) *string { return &c.TLSCACertFile }),
	{"tls-auth-clients", func(s *Server) string { return strings.ToLower(s.cfg.TLSAuthClients) }, func(s *Server, v string) error {
		switch strings.ToLower(v) {
		case "yes", "no", "optional":
		default:
			return configError("argument(s) must be one of the following: no, yes, optional")
		}
		s.cfg.TLSAuthClients = strings.ToLower(v)
		s.tlsDirty.files = true
		return nil
	}},
}

func tlsFileParam(name string, field func(*Config) *string) configParam {
	return configParam{name, func(s *Server) string { return *field(&s.cfg) }, func(s *Server, v string) error {
		*field(&s.cfg) = v
		s.tlsDirty.files = true
		return nil
	}}
}

// errTLSUpdate is Redis's answer to TLS settings it cannot apply.
var errTLSUpdate = configError("Unable to update TLS configuration. Check server logs.")

// applyTLS applies what CONFIG SET changed of the TLS settings: the files
// read again, and the TLS listeners moved to a new tls-port, opened for
// the first or closed at 0. Nothing changes if it fails. It runs on the
// loop.
func (s *Server) applyTLS() error {
	dirty := s.tlsDirty
	s.tlsDirty.files, s.tlsDirty.port = false, false
	if !dirty.files && !dirty.port {
		return nil
	}
	if s.cfg.TLSPort == 0 {
		if !dirty.port || s.tls == nil {
			return nil // files kept for a tls-port to come, as Redis keeps them
		}
		if s.cfg.Port == 0 && s.cfg.UnixSocket == "" {
			return configError("evkv has no plain port or Unix socket: tls-port 0 would leave it unreachable")
		}
		s.bindMu.Lock()
		old := s.boundTLS
		s.boundTLS = nil
		s.bindMu.Unlock()
		for _, a := range old {
			s.ev.UnlistenLoop(0, a)
		}
		s.tls = nil
		s.log.Info("kv: not listening for TLS (tls-port 0)")
		return nil
	}
	config, err := tlsConfig(s.cfg)
	if err != nil {
		s.log.Warn("kv: the TLS settings could not be applied", "err", err)
		return errTLSUpdate
	}
	fresh := s.tls == nil
	if fresh {
		s.useTLS(config) // the listeners' configuration, made
	}
	if dirty.port || fresh {
		if err := s.relisten(&s.boundTLS, s.cfg.Bind, s.cfg.TLSPort, s.tls); err != nil {
			if fresh {
				s.tls = nil
			}
			return configError("Unable to listen on this port. Check server logs.")
		}
	}
	s.useTLS(config)
	return nil
}
