#!/usr/bin/env bash
# Writes a CA and certificates for 127.0.0.1 with Debian's openssl, for //rpc:grpc_tls_test.
# Usage: grpc_tls_test.sh DIR
set -euo pipefail
dir=$1
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=sluice-test-ca 2>/dev/null
for name in server client other; do
  openssl req -newkey rsa:2048 -nodes -keyout $name.key -out $name.csr -subj /CN=$name 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' > $name.ext
  openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $name.pem -days 2 \
    -extfile $name.ext 2>/dev/null
done
# A certificate from another CA: not the cluster's.
openssl req -x509 -newkey rsa:2048 -nodes -keyout stranger.key -out stranger.pem -days 2 \
  -subj /CN=stranger -addext subjectAltName=IP:127.0.0.1 2>/dev/null
