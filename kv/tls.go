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

// tlsParams show the TLS settings to CONFIG GET; evkv reads them at start
// only, where Redis lets CONFIG SET change them.
var tlsParams = []configParam{
	{"tls-port", func(s *Server) string { return fmt.Sprint(s.cfg.TLSPort) }, nil},
	{"tls-cert-file", func(s *Server) string { return s.cfg.TLSCertFile }, nil},
	{"tls-key-file", func(s *Server) string { return s.cfg.TLSKeyFile }, nil},
	{"tls-ca-cert-file", func(s *Server) string { return s.cfg.TLSCACertFile }, nil},
	{"tls-auth-clients", func(s *Server) string { return strings.ToLower(s.cfg.TLSAuthClients) }, nil},
}
