#!/usr/bin/env python3
"""A real SMTP server for FitBase's SMTP test in CI (aiosmtpd, from PyPI).

It requires STARTTLS before anything else, then AUTH PLAIN or AUTH LOGIN as one fixed user (over TLS only), and
writes each message it accepts to --maildir as NAME.eml (the message as received, dot-stuffing undone) beside
NAME.json (envelope sender and recipients, whether TLS was on, the authenticated user). The .json is written first
and each file appears at once, whole (written to a temporary name, then renamed).

It prints "ready HOST:PORT" once it accepts connections, and stops on SIGTERM or SIGINT, or, with --exit-with-pid,
once that process is gone. scripts/ci/smtp-ci-setup.sh starts it.
"""

import argparse
import json
import os
import signal
import ssl
import sys
import threading
import uuid
import warnings

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class MaildirWriter:
    """Writes each accepted message to a directory."""

    def __init__(self, directory):
        self.directory = directory

    async def handle_DATA(self, server, session, envelope):
        name = f"{uuid.uuid4().hex}"
        user = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        details = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "tls": session.ssl is not None,
            "user": user,
        }
        self._write(f"{name}.json", json.dumps(details, indent=2).encode())
        self._write(f"{name}.eml", envelope.original_content)
        return "250 2.0.0 Message accepted"

    def _write(self, file_name, data):
        temporary = os.path.join(self.directory, f".{file_name}.tmp")
        with open(temporary, "wb") as file:
            file.write(data)
        os.replace(temporary, os.path.join(self.directory, file_name))


class FixedUser:
    """Accepts one user name and password, for PLAIN and LOGIN alike."""

    def __init__(self, user, password):
        self.user = user.encode()
        self.password = password.encode()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        accepted = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == self.user
            and auth_data.password == self.password
        )
        return AuthResult(success=accepted, handled=False, auth_data=auth_data if accepted else None)


def is_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True, help="PEM certificate chain of the server")
    parser.add_argument("--key", required=True, help="PEM private key of the server")
    parser.add_argument("--maildir", required=True, help="directory that receives NAME.eml and NAME.json")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--exit-with-pid", type=int, help="stop once this process has ended")
    args = parser.parse_args()

    # aiosmtpd sets its own deprecated Session.login_data after every AUTH, and warns about it.
    warnings.filterwarnings("ignore", message="Session.login_data is deprecated")
    os.makedirs(args.maildir, exist_ok=True)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(args.cert, args.key)

    controller = Controller(
        MaildirWriter(args.maildir),
        hostname=args.host,
        port=args.port,
        server_hostname="fitbase-ci.test",
        tls_context=tls,
        require_starttls=True,
        auth_required=True,
        auth_require_tls=True,
        authenticator=FixedUser(args.user, args.password),
    )
    controller.start()
    print(f"ready {args.host}:{args.port}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(1):
        if args.exit_with_pid and not is_alive(args.exit_with_pid):
            break
    controller.stop()
    print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
