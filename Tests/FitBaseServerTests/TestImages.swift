import Foundation

@testable import FitBaseServer

/// Images built byte by byte for the media tests: the structure JPEG, PNG and HEIC files have, with metadata that
/// must not survive an upload (a GPS position, a comment, a camera) marked by ``secret``.
enum TestImages {
    /// Text planted in every piece of metadata; no stored photo may contain it.
    static let secret = "GPS-51.5007N-0.1246W-SECRET"

    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker] + be16(payload.count + 2) + payload
    }

    /// A baseline JPEG of `width`×`height` with JFIF, an EXIF (orientation 6, and the secret as the image description
    /// and in a GPS IFD), an XMP packet and a comment.
    static func jpeg(width: Int = 640, height: Int = 480, orientation: Int = 6) -> [UInt8] {
        let secret = Array(secret.utf8) + [0]
        // Big-endian TIFF: IFD0 with Orientation, ImageDescription (→ secret) and GPSInfo (→ GPS IFD holding the
        // secret as GPSAreaInformation-like ASCII).
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A] + be32(8)
        let ifd0Entries = 3
        let ifd0Size = 2 + ifd0Entries * 12 + 4
        let descriptionOffset = 8 + ifd0Size
        let gpsOffset = descriptionOffset + secret.count
        tiff += be16(ifd0Entries)
        tiff += be16(0x010E) + be16(2) + be32(secret.count) + be32(descriptionOffset)
        tiff += be16(0x0112) + be16(3) + be32(1) + be16(orientation) + [0, 0]
        tiff += be16(0x8825) + be16(4) + be32(1) + be32(gpsOffset)
        tiff += be32(0)
        tiff += secret
        let gpsValueOffset = gpsOffset + 2 + 12 + 4
        tiff += be16(1) + be16(0x001C) + be16(2) + be32(secret.count) + be32(gpsValueOffset) + be32(0) + secret
        let exif = Array("Exif\0\0".utf8) + tiff

        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += segment(0xE0, Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0])
        bytes += segment(0xE1, exif)
        bytes += segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>\(Self.secret)</x:xmpmeta>".utf8))
        bytes += segment(0xFE, Array("taken at \(Self.secret)".utf8))
        bytes += segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
        bytes += segment(0xC0, [8] + be16(height) + be16(width) + [1, 1, 0x11, 0])
        bytes += segment(0xC4, [0x00] + [1] + [UInt8](repeating: 0, count: 15) + [0])
        bytes += segment(0xDA, [1, 1, 0x00, 0, 63, 0])
        // Entropy-coded data with a stuffed 0xFF and a restart marker inside.
        bytes += [0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD0, 0x78, 0x9A]
        bytes += [0xFF, 0xD9]
        return bytes
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(data.count) + typed + be32(CRC32.checksum(typed))
    }

    /// A PNG of `width`×`height` with text, time and eXIf chunks.
    static func png(width: Int = 320, height: Int = 200) -> [UInt8] {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        bytes += chunk("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0])
        bytes += chunk("tEXt", Array("Location\0\(secret)".utf8))
        bytes += chunk("eXIf", [0x4D, 0x4D, 0x00, 0x2A] + Array(secret.utf8))
        bytes += chunk("tIME", [0x07, 0xEA, 11, 26, 8, 0, 0])
        bytes += chunk("sRGB", [0])
        bytes += chunk("IDAT", [0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01])
        bytes += chunk("iTXt", Array("Comment\0\0\0\0\0\(secret)".utf8))
        bytes += chunk("IEND", [])
        return bytes
    }

    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] {
        be32(content.count + 8) + Array(type.utf8) + content
    }

    static func fullBox(_ type: String, version: UInt8 = 0, _ content: [UInt8]) -> [UInt8] {
        box(type, [version, 0, 0, 0] + content)
    }

    /// A HEIC of `width`×`height`: an image item and an Exif item holding the secret, both in `mdat`.
    static func heic(width: Int = 1024, height: Int = 768) -> [UInt8] {
        let ftyp = box("ftyp", Array("heic".utf8) + be32(0) + Array("mif1heic".utf8))
        let imageData: [UInt8] = [0x00, 0x00, 0x00, 0x10] + [UInt8](repeating: 0xAB, count: 16)
        let exifData = be32(0) + Array("MM\0*".utf8) + Array(secret.utf8)
        func meta(mdatStart: Int) -> [UInt8] {
            let hdlr = fullBox("hdlr", be32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
            let pitm = fullBox("pitm", be16(1))
            let infe1 = fullBox("infe", version: 2, be16(1) + be16(0) + Array("hvc1".utf8) + [0])
            let infe2 = fullBox("infe", version: 2, be16(2) + be16(0) + Array("Exif".utf8) + [0])
            let iinf = fullBox("iinf", be16(2) + infe1 + infe2)
            // iloc v0: offset_size 4, length_size 4, base_offset_size 0.
            let iloc = fullBox(
                "iloc",
                [0x44, 0x00] + be16(2)
                    + be16(1) + be16(0) + be16(1) + be32(mdatStart) + be32(imageData.count)
                    + be16(2) + be16(0) + be16(1) + be32(mdatStart + imageData.count) + be32(exifData.count)
            )
            let ispe = fullBox("ispe", be32(width) + be32(height))
            let iprp = box("iprp", box("ipco", ispe))
            return fullBox("meta", hdlr + pitm + iloc + iinf + iprp)
        }
        let metaLength = meta(mdatStart: 0).count
        let mdatStart = ftyp.count + metaLength + 8
        return ftyp + meta(mdatStart: mdatStart) + box("mdat", imageData + exifData)
    }

    /// A HEIC whose primary item is a grid of one tile: its `ispe` says `declared`, its grid data says `canvas` (what a
    /// decoder allocates before it decodes a tile). A grid bomb when `canvas` is far larger than `declared`.
    static func heicGrid(declared: (width: Int, height: Int), canvas: (width: Int, height: Int)) -> [UInt8] {
        let ftyp = box("ftyp", Array("heic".utf8) + be32(0) + Array("mif1heic".utf8))
        let tileData: [UInt8] = [0x00, 0x00, 0x00, 0x10] + [UInt8](repeating: 0xAB, count: 16)
        // ImageGrid: version 0, flags 1 (32-bit output sizes), one row, one column.
        let gridData: [UInt8] = [0, 1, 0, 0] + be32(canvas.width) + be32(canvas.height)
        func meta(mdatStart: Int) -> [UInt8] {
            let hdlr = fullBox("hdlr", be32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
            let pitm = fullBox("pitm", be16(2))
            let infe1 = fullBox("infe", version: 2, be16(1) + be16(0) + Array("hvc1".utf8) + [0])
            let infe2 = fullBox("infe", version: 2, be16(2) + be16(0) + Array("grid".utf8) + [0])
            let iinf = fullBox("iinf", be16(2) + infe1 + infe2)
            // iloc v1: offset_size 4, length_size 4; the tile in mdat (method 0), the grid in idat (method 1).
            let iloc = fullBox(
                "iloc", version: 1,
                [0x44, 0x00] + be16(2)
                    + be16(1) + be16(0) + be16(0) + be16(1) + be32(mdatStart) + be32(tileData.count)
                    + be16(2) + be16(1) + be16(0) + be16(1) + be32(0) + be32(gridData.count)
            )
            let iref = fullBox("iref", box("dimg", be16(2) + be16(1) + be16(1)))
            let ipco = box("ipco", fullBox("ispe", be32(declared.width) + be32(declared.height)))
            let ipma = fullBox("ipma", be32(2) + be16(1) + [1, 0x81] + be16(2) + [1, 0x81])
            return fullBox("meta", hdlr + pitm + iloc + iinf + iref + box("idat", gridData) + box("iprp", ipco + ipma))
        }
        let metaLength = meta(mdatStart: 0).count
        return ftyp + meta(mdatStart: ftyp.count + metaLength + 8) + box("mdat", tileData)
    }

    /// Whether `bytes` contain `text`.
    static func contains(_ bytes: some Collection<UInt8>, _ text: String) -> Bool {
        contains(bytes, bytes: Array(text.utf8))
    }

    /// Whether `bytes` contain `needle`.
    static func contains(_ bytes: some Collection<UInt8>, bytes needle: [UInt8]) -> Bool {
        let haystack = Array(bytes)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
