// Package testcert makes, once a process, a certificate authority and a
// server certificate it signed, for tests of TLS over loopback: the server
// certificate names localhost, 127.0.0.1 and ::1.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

type certs struct {
	caDER   []byte
	pool    *x509.CertPool
	cert    tls.Certificate
	certPEM []byte
	keyPEM  []byte
}

var made = sync.OnceValue(func() *certs {
	now := time.Now()
	caKey := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "evloop test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER := must(x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey))
	ca = must(x509.ParseCertificate(caDER))
	key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der := must(x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey))
	keyDER := must(x509.MarshalECPrivateKey(key))
	c := &certs{caDER: caDER, pool: x509.NewCertPool()}
	c.pool.AddCert(ca)
	c.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	c.keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	c.cert = must(tls.X509KeyPair(c.certPEM, c.keyPEM))
	return c
})

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Server returns a server configuration with the certificate.
func Server() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{made().cert}}
}

// Client returns a client configuration that trusts the certificate's
// authority and checks the name localhost.
func Client() *tls.Config {
	return &tls.Config{RootCAs: made().pool, ServerName: "localhost"}
}

// Pool returns the pool of the certificate's authority.
func Pool() *x509.CertPool { return made().pool }

// WriteFiles writes the certificate, its key and its authority's
// certificate as PEM files into dir and returns their paths.
func WriteFiles(dir string) (certFile, keyFile, caFile string, err error) {
	c := made()
	certFile = filepath.Join(dir, "cert.pem")
	keyFile = filepath.Join(dir, "key.pem")
	caFile = filepath.Join(dir, "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.caDER})
	for _, f := range []struct {
		path string
		b    []byte
	}{{certFile, c.certPEM}, {keyFile, c.keyPEM}, {caFile, ca}} {
		if err = os.WriteFile(f.path, f.b, 0o600); err != nil {
			return "", "", "", err
		}
	}
	return certFile, keyFile, caFile, nil
}
