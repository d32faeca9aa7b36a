// Package testcert makes, once a process, a certificate authority, a
// server certificate and a client certificate it signed, for tests of TLS
// over loopback: the server certificate names localhost, 127.0.0.1 and
// ::1.
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
	caDER  []byte
	pool   *x509.CertPool
	server pair
	client pair
}

// pair is a certificate and its key, parsed and as PEM.
type pair struct {
	cert            tls.Certificate
	certPEM, keyPEM []byte
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
	sign := func(serial int64, name string, usage x509.ExtKeyUsage) pair {
		key := must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
		leaf := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     []string{name},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		}
		der := must(x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey))
		p := pair{
			certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: must(x509.MarshalECPrivateKey(key))}),
		}
		p.cert = must(tls.X509KeyPair(p.certPEM, p.keyPEM))
		return p
	}
	c := &certs{caDER: caDER, pool: x509.NewCertPool()}
	c.pool.AddCert(ca)
	c.server = sign(2, "localhost", x509.ExtKeyUsageServerAuth)
	c.client = sign(3, "client", x509.ExtKeyUsageClientAuth)
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
	return &tls.Config{Certificates: []tls.Certificate{made().server.cert}}
}

// Client returns a client configuration that trusts the certificate's
// authority and checks the name localhost.
func Client() *tls.Config {
	return &tls.Config{RootCAs: made().pool, ServerName: "localhost"}
}

// Pool returns the pool of the certificate's authority.
func Pool() *x509.CertPool { return made().pool }

// ClientCertificate returns the client certificate, for a server that
// asks for one.
func ClientCertificate() tls.Certificate { return made().client.cert }

// WriteFiles writes the server certificate, its key and its authority's
// certificate as PEM files into dir and returns their paths.
func WriteFiles(dir string) (certFile, keyFile, caFile string, err error) {
	c := made()
	certFile, keyFile, err = writePair(dir, "", c.server)
	if err != nil {
		return "", "", "", err
	}
	caFile = filepath.Join(dir, "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.caDER})
	return certFile, keyFile, caFile, os.WriteFile(caFile, ca, 0o600)
}

// WriteClientFiles writes the client certificate and its key as PEM
// files into dir and returns their paths.
func WriteClientFiles(dir string) (certFile, keyFile string, err error) {
	return writePair(dir, "client-", made().client)
}

func writePair(dir, prefix string, p pair) (certFile, keyFile string, err error) {
	certFile = filepath.Join(dir, prefix+"cert.pem")
	keyFile = filepath.Join(dir, prefix+"key.pem")
	for _, f := range []struct {
		path string
		b    []byte
	}{{certFile, p.certPEM}, {keyFile, p.keyPEM}} {
		if err = os.WriteFile(f.path, f.b, 0o600); err != nil {
			return "", "", err
		}
	}
	return certFile, keyFile, nil
}
