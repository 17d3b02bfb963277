// The one libheif type FitBase needs declared in C: `struct heif_error`, which libheif's functions return by value
// (libheif 1.x, `heif.h`). Swift calls a C function returning a struct only through a C declaration of that struct;
// the functions themselves are found at run time with dlsym (SystemImageLibraries.swift), so building needs no
// libheif headers and running without libheif only leaves HEIC photos without thumbnails.
#ifndef CLIBHEIFABI_H
#define CLIBHEIFABI_H

struct fitbase_heif_error {
    int code;          // enum heif_error_code: 0 is heif_error_Ok
    int subcode;       // enum heif_suberror_code
    const char *message;
};

#endif
