package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quiverdb/quiver"
	"github.com/quiverdb/quiver/auth"
	"github.com/quiverdb/quiver/format"
)

// testPKI writes a CA and a certificate it signs for 127.0.0.1 (server and
// client use) under dir, and returns their paths.
func testPKI(t *testing.T, dir, name string) (ca, cert, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(file, typ string, der []byte) string {
		p := filepath.Join(dir, name+"-"+file)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", leafDER), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// TestTLSRealProcesses: a scheduler and an executor with --tls-cert,
// --tls-key and --tls-ca talk mutual TLS to each other and to clients; a
// client in plain text, one without a certificate and one whose
// certificate another CA signed are refused, and the right one runs a
// query end to end (results fetched from the executor over TLS). REST is
// HTTPS.
func TestTLSRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quiver binary")
	}
	dir := t.TempDir()
	ca, cert, key := testPKI(t, dir, "cluster")
	_, rogueCert, rogueKey := testPKI(t, dir, "rogue")
	bin := buildQuiver(t)
	schedAddr, restAddr := freeAddr(t), freeAddr(t)
	tlsEnv := []string{"QUIVER_TLS_CERT=" + cert, "QUIVER_TLS_KEY=" + key, "QUIVER_TLS_CA=" + ca}
	startDaemon(t, bin, tlsEnv, "scheduler", "--bind", schedAddr, "--rest", restAddr)
	startDaemon(t, bin, tlsEnv, "executor", "--scheduler", schedAddr, "--bind", freeAddr(t), "--work-dir", t.TempDir(), "--heartbeat", "200ms")

	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(ca)
	pool.AppendCertsFromPEM(caPEM)
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer https.CloseIdleConnections()
	waitUntil(t, "the executor to register over mutual TLS", 30*time.Second, func() bool {
		resp, err := https.Get("https://" + restAddr + "/api/executors")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode == 200 && strings.Contains(b.String(), `"id"`)
	})
	if resp, err := http.Get("http://" + restAddr + "/healthz"); err == nil {
		ok := resp.StatusCode == 200
		resp.Body.Close()
		if ok {
			t.Error("REST answered plain HTTP")
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	load := func(cert, key, ca string) auth.TLS {
		t.Helper()
		c, err := auth.LoadTLS(cert, key, ca)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for name, opts := range map[string][]quiver.Option{
		"plain text":        nil,
		"no certificate":    {quiver.WithTLS(load("", "", ca))},
		"another CA's cert": {quiver.WithTLS(load(rogueCert, rogueKey, ca))},
	} {
		cctx, ccancel := context.WithTimeout(ctx, 4*time.Second)
		s, err := quiver.Connect(cctx, schedAddr, opts...)
		ccancel()
		if err == nil {
			s.Close()
			t.Errorf("%s: Connect succeeded", name)
		}
	}
	s, err := quiver.Connect(ctx, schedAddr, quiver.WithTLS(load(cert, key, ca)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nation, _ := filepath.Abs("../../tpch/sf0.01/nation.parquet")
	if err := s.RegisterParquet(ctx, "nation", nation); err != nil {
		t.Fatal(err)
	}
	df, err := s.SQL(ctx, "SELECT count(*) AS n FROM nation WHERE n_regionkey = 1")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := df.Print(ctx, &out, format.CSV, format.Options{}); err != nil {
		t.Fatalf("query over TLS: %v", err)
	}
	if out.String() != "n\n5\n" {
		t.Errorf("result %q", out.String())
	}

	if _, err := auth.LoadTLS(cert, "", ""); err == nil || !strings.Contains(err.Error(), "together") {
		t.Errorf("a certificate without its key: %v", err)
	}
	code, _, errs := runCLI(t, "", "executor", "--tls-cert", cert, "--tls-key", rogueKey)
	if code != 2 || !strings.Contains(errs, "TLS certificate") {
		t.Errorf("a certificate with the wrong key: exit %d: %s", code, errs)
	}
}
