-- The health data keys' own database (FITBASE_KEYSTORE_URL in compose.yaml): back it up apart from `fitbase`, so a
-- dump of the data cannot decrypt the samples of accounts deleted after the dump was taken.
CREATE DATABASE fitbase_keys OWNER fitbase;
