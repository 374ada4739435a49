#!/usr/bin/env bash
# Once, before the first `kubectl apply -k deploy/kubernetes`: the MQTT broker's credentials, as
# the files that deploy/kubernetes/kustomization.yaml's secretGenerator reads (git-ignored):
#   secrets/broker-password    the runners' password (48 hex digits from openssl rand), one line
#   secrets/mosquitto-passwd   Mosquitto's password file for the user cudavision (mosquitto_passwd:
#                              Debian's package mosquitto)
# Files that are there are kept; delete both to make new ones (then apply again: the Secrets'
# names change and the pods roll).
#   deploy/make-broker-secrets.sh [DIR]    (default deploy/kubernetes/secrets)
set -eu
dir=${1:-$(dirname "$0")/kubernetes/secrets}
user=cudavision
mkdir -p "$dir"
umask 077
if [ ! -s "$dir/broker-password" ]; then
  openssl rand -hex 24 > "$dir/broker-password"
  rm -f "$dir/mosquitto-passwd"
fi
if [ ! -s "$dir/mosquitto-passwd" ]; then
  password=$(head -n 1 "$dir/broker-password")
  # the password twice on standard input, as to the prompt: never on a command line
  printf '%s\n%s\n' "$password" "$password" | mosquitto_passwd -c "$dir/mosquitto-passwd" "$user" >/dev/null
fi
echo "broker credentials for $user in $dir: $(cd "$dir" && echo broker-password mosquitto-passwd)"
