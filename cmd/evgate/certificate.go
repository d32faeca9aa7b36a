package main

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// certificate is --tls-cert and --tls-key's pair, read again at SIGHUP,
// as a renewal leaves new files: the new certificate serves the
// handshakes from then on, and no connection is dropped.
type certificate struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

func loadCertificate(certFile, keyFile string) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile}
	return c, c.load()
}

// load reads the files; on failure the certificate in use stays.
func (c *certificate) load() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return err
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return err
		}
	}
	c.cur.Store(&cert)
	return nil
}

// get is the TLS configuration's GetCertificate.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cur.Load(), nil }

// reloadOnHangup reads the files again at each SIGHUP until stop is
// closed, on a goroutine of its own, and logs the outcome. The signal is
// caught from the call on.
func (c *certificate) reloadOnHangup(log *slog.Logger, stop <-chan struct{}) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go c.reload(log, hup, stop)
}

func (c *certificate) reload(log *slog.Logger, hup <-chan os.Signal, stop <-chan struct{}) {
	defer signal.Ignore(syscall.SIGHUP) // not its default, which ends the process
	for {
		select {
		case <-stop:
			return
		case <-hup:
		}
		if err := c.load(); err != nil {
			log.Warn("TLS certificate not reloaded: the one in use stays", "cert", c.certFile, "key", c.keyFile, "err", err)
			continue
		}
		leaf := c.cur.Load().Leaf
		log.Info("TLS certificate reloaded", "cert", c.certFile, "subject", leaf.Subject.String(), "not_after", leaf.NotAfter)
	}
}
