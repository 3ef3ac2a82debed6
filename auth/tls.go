package auth

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/quiverdb/quiver/qerr"
)

// TLS is a process's transport security: its certificate and key (what it
// presents as a server, and as a client when mutual), and the CA that signs
// every party's certificate. The zero TLS is plain text.
//
// The rule, the same for every port: with a certificate, a process serves
// TLS; with a CA, it verifies peers against that CA rather than the system
// roots, and its gRPC servers require a client certificate the CA signed
// (mutual TLS between scheduler, executors and clients). HTTP (REST, the
// web UI, /metrics) asks for a client certificate but does not require one,
// so that browsers and scrapers can come in with the token instead.
// Certificates used both ways need both the server and client key usages
// (or none).
type TLS struct {
	cert *tls.Certificate
	pool *x509.CertPool
}

// LoadTLS reads PEM files: certFile and keyFile go together; caFile alone
// makes a client that verifies servers against it. All empty is plain text.
func LoadTLS(certFile, keyFile, caFile string) (TLS, error) {
	var t TLS
	if (certFile == "") != (keyFile == "") {
		return TLS{}, qerr.Planf("auth: give --tls-cert and --tls-key together")
	}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return TLS{}, qerr.Planf("auth: TLS certificate %s and key %s: %w", certFile, keyFile, err)
		}
		t.cert = &c
	}
	if caFile != "" {
		b, err := os.ReadFile(caFile)
		if err != nil {
			return TLS{}, qerr.IOf("auth: read TLS CA: %w", err)
		}
		t.pool = x509.NewCertPool()
		if !t.pool.AppendCertsFromPEM(b) {
			return TLS{}, qerr.Planf("auth: TLS CA %s holds no PEM certificate", caFile)
		}
	}
	return t, nil
}

// Enabled reports whether this process speaks TLS (as a client, a CA
// alone is enough).
func (t TLS) Enabled() bool { return t.cert != nil || t.pool != nil }

// Serving reports whether this process's servers speak TLS.
func (t TLS) Serving() bool { return t.cert != nil }

func (t TLS) serverConfig(requireClient bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{*t.cert}, MinVersion: tls.VersionTLS12}
	if t.pool != nil {
		cfg.ClientCAs = t.pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		if requireClient {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return cfg
}

// ServerOptions make a gRPC server speak TLS (none without a certificate).
func (t TLS) ServerOptions() []grpc.ServerOption {
	if !t.Serving() {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(t.serverConfig(true)))}
}

// Listener wraps an HTTP listener in TLS (unchanged without a certificate).
func (t TLS) Listener(l net.Listener) net.Listener {
	if !t.Serving() {
		return l
	}
	return tls.NewListener(l, t.serverConfig(false))
}

// DialOption is the transport of every gRPC client connection: TLS
// verified against the CA (or the system roots), presenting the
// certificate when there is one; plain text for the zero TLS.
func (t TLS) DialOption() grpc.DialOption {
	if !t.Enabled() {
		return grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	cfg := &tls.Config{RootCAs: t.pool, MinVersion: tls.VersionTLS12}
	if t.cert != nil {
		cfg.Certificates = []tls.Certificate{*t.cert}
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(cfg))
}
