/// JPEG: segments walked from SOI to EOI. Kept: the image data and what decoding needs (tables, frame and scan headers,
/// restart intervals), APP0 JFIF, APP2 ICC profiles and APP14 Adobe (colour transform). Dropped: every other APPn
/// (EXIF with its GPS position, XMP, IPTC, maker notes) and comments. The EXIF orientation, if any, comes back as an
/// EXIF holding that tag alone, so the photo still shows upright.
enum JPEGCleaner {
    static func clean(_ bytes: [UInt8]) throws(ImageProblem) -> InspectedImage {
        let reader = ByteReader(bytes: bytes)
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(bytes.count)
        var offset = 2
        var size: (width: Int, height: Int)?
        var progressive = false
        var orientation: Int?
        var wroteOrientation = false
        while true {
            // A marker: one or more 0xFF, then its code.
            guard offset < bytes.count, bytes[offset] == 0xFF else { throw .truncated("expected a JPEG marker at byte \(offset)") }
            while offset < bytes.count, bytes[offset] == 0xFF { offset += 1 }
            guard offset < bytes.count else { throw .truncated("the file ends inside a marker") }
            let marker = bytes[offset]
            offset += 1
            if marker == 0xD9 {
                out.append(contentsOf: [0xFF, 0xD9])
                break
            }
            // Restart markers belong inside image data, where the scan below keeps them; one between segments (or
            // the arithmetic-coding TEM) is not part of an image FitBase accepts.
            if (0xD0...0xD7).contains(marker) || marker == 0x01 {
                throw .truncated("a JPEG restart marker stands outside the image data")
            }
            let length = try reader.uint16(at: offset)
            guard length >= 2, offset + length <= bytes.count else { throw .truncated("a JPEG segment runs past the end of the file") }
            let segment = bytes[offset..<offset + length]
            let payload = bytes[(offset + 2)..<(offset + length)]
            offset += length

            switch marker {
            case 0xE1:
                if orientation == nil { orientation = exifOrientation(Array(payload)).flatMap { $0 == 1 ? nil : $0 } }
                continue
            case 0xE0, 0xE2, 0xEE:
                guard keeps(marker, payload) else { continue }
            case 0xE3...0xED, 0xEF, 0xFE:
                continue
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                // One frame only: a decoder sizes its buffers from the first, and a limit that read a later one
                // (or a viewer that showed it) would not be judging the image that gets decoded.
                guard size == nil else { throw .truncated("the JPEG has more than one frame header") }
                guard payload.count >= 5 else { throw .truncated("a JPEG frame header is too short") }
                let start = payload.startIndex
                size = (Int(payload[start + 3]) << 8 | Int(payload[start + 4]), Int(payload[start + 1]) << 8 | Int(payload[start + 2]))
                progressive = [0xC2, 0xC6, 0xCA, 0xCE].contains(marker)
            default:
                break
            }
            // The orientation goes just before the first frame header or table, after any JFIF header.
            if !wroteOrientation, marker != 0xE0, let value = orientation {
                out.append(contentsOf: orientationSegment(value))
                wroteOrientation = true
            }
            out.append(contentsOf: [0xFF, marker])
            out.append(contentsOf: segment)

            if marker == 0xDA {
                // Entropy-coded data: up to the next marker that is not a stuffed byte or a restart.
                let dataStart = offset
                var cursor = offset
                while true {
                    guard cursor + 1 < bytes.count else { throw .truncated("the file ends inside the image data") }
                    if bytes[cursor] == 0xFF {
                        let next = bytes[cursor + 1]
                        if next != 0x00, next != 0xFF, !(0xD0...0xD7).contains(next) { break }
                    }
                    cursor += 1
                }
                out.append(contentsOf: bytes[dataStart..<cursor])
                offset = cursor
            }
        }
        guard let size else { throw .truncated("the JPEG has no frame header") }
        return InspectedImage(format: .jpeg, width: size.width, height: size.height, bytes: out, decodedWhole: progressive)
    }

    /// Whether an APP0, APP2 or APP14 segment is one of the kept kinds (JFIF, ICC profile, Adobe).
    private static func keeps(_ marker: UInt8, _ payload: ArraySlice<UInt8>) -> Bool {
        switch marker {
        case 0xE0: payload.starts(with: Array("JFIF\0".utf8))
        case 0xE2: payload.starts(with: Array("ICC_PROFILE\0".utf8))
        case 0xEE: payload.starts(with: Array("Adobe".utf8))
        default: false
        }
    }

    /// The orientation (1–8) in an APP1 EXIF payload's first IFD, nil when there is none.
    static func exifOrientation(_ payload: [UInt8]) -> Int? {
        guard payload.starts(with: Array("Exif\0\0".utf8)) else { return nil }
        let tiff = Array(payload.dropFirst(6))
        guard tiff.count >= 8 else { return nil }
        let little = tiff[0] == 0x49
        func read(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= tiff.count else { return nil }
            let slice = tiff[at..<at + count]
            return (little ? Array(slice.reversed()) : Array(slice)).reduce(0) { $0 << 8 | Int($1) }
        }
        guard let ifd = read(4, 4), let entries = read(ifd, 2) else { return nil }
        for index in 0..<min(entries, 512) {
            let entry = ifd + 2 + index * 12
            guard let tag = read(entry, 2) else { return nil }
            if tag == 0x0112, let value = read(entry + 8, 2), (1...8).contains(value) { return value }
        }
        return nil
    }

    /// An APP1 EXIF segment holding only the orientation tag.
    static func orientationSegment(_ orientation: Int) -> [UInt8] {
        let tiff: [UInt8] = [
            0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,  // big-endian TIFF, IFD0 at 8
            0x00, 0x01,  // one entry
            0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, UInt8(orientation), 0x00, 0x00,  // Orientation, SHORT, 1
            0x00, 0x00, 0x00, 0x00,  // no next IFD
        ]
        let payload = Array("Exif\0\0".utf8) + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }
}
