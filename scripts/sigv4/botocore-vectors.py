#!/usr/bin/env python3
"""Prints what botocore signs for the S3 requests FitBase's S3 store sends, at a fixed instant.
Paths are given percent-encoded, as boto3's serializers hand them to the signer.

Tests/FitBaseSigV4Tests/BotocoreS3Tests.swift holds this output as its expected values; run this script (botocore
from pip: `python3 -m pip install botocore`) to check or regenerate them.
"""
import datetime
import json
from urllib.parse import quote
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

NOW = datetime.datetime(2026, 11, 26, 8, 30, 5, tzinfo=datetime.timezone.utc)
KEY, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEAQaDEXAMPLE/token+value=="
ENDPOINT = "http://127.0.0.1:5055"


def presign(path, expires, token=None, region="us-east-1"):
    request = AWSRequest(method="GET", url=ENDPOINT + path)
    signer = botocore.auth.S3SigV4QueryAuth(Credentials(KEY, SECRET, token), "s3", region, expires=expires)
    signer.add_auth(request)
    return request.url


def sign(method, path, body=b"", unsigned=False, token=None, region="eu-central-1", headers=None):
    request = AWSRequest(method=method, url=ENDPOINT + path, data=body, headers=headers or {})
    if unsigned:
        request.context["client_config"] = Config(s3={"payload_signing_enabled": False})
    signer = botocore.auth.S3SigV4Auth(Credentials(KEY, SECRET, token), "s3", region)
    signer.add_auth(request)
    return {name: request.headers[name] for name in ("X-Amz-Content-SHA256", "Authorization")}


with mock.patch("botocore.auth.get_current_datetime", return_value=NOW.replace(tzinfo=None)):
    print(json.dumps({
        "presignedGet": presign("/fitbase-media/users/4f1c/photo/full.jpg", 3600),
        "presignedGetSpacesAndUnicode": presign(quote("/fitbase-media/catalog/Flow yoga/vidéo 1.mp4", safe="/~"), 900),
        "presignedGetWithToken": presign("/fitbase-media/a.bin", 60, token=TOKEN, region="eu-central-1"),
        "putWithBody": sign("PUT", "/fitbase-media/users/4f1c/photo/thumb.jpg", b"hello, S3",
                            headers={"Content-Type": "image/jpeg"}),
        "putUnsigned": sign("PUT", "/fitbase-media/big.bin?partNumber=2&uploadId=abc%2Fdef", b"x", unsigned=True),
        "listWithToken": sign("GET", "/fitbase-media?list-type=2&prefix=users%2F4f1c%2F", token=TOKEN),
    }, indent=2, sort_keys=True))
