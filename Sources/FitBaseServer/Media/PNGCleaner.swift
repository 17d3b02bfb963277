/// PNG: chunks walked from the signature to IEND, each CRC checked. Kept: critical chunks, transparency, colour
/// (gAMA, cHRM, sRGB, iCCP, sBIT), pixel size, background and animation chunks. Dropped: text (tEXt, zTXt, iTXt),
/// eXIf, tIME and anything else.
enum PNGCleaner {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    private static let kept: Set<String> = [
        "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "pHYs", "bKGD", "acTL", "fcTL", "fdAT",
    ]

    static func clean(_ bytes: [UInt8]) throws(ImageProblem) -> InspectedImage {
        let reader = ByteReader(bytes: bytes)
        var out = signature
        out.reserveCapacity(bytes.count)
        var offset = signature.count
        var size: (width: Int, height: Int)?
        var ended = false
        while !ended {
            let length = try reader.uint32(at: offset)
            let type = try reader.fourCC(at: offset + 4)
            let end = offset + 12 + length
            guard length < 1 << 31, end <= bytes.count else { throw .truncated("a PNG chunk runs past the end of the file") }
            let crc = try reader.uint32(at: end - 4)
            guard CRC32.checksum(bytes[(offset + 4)..<(end - 4)]) == crc else { throw .truncated("the PNG chunk \(type) is damaged") }
            if size == nil {
                guard type == "IHDR", length >= 8 else { throw .truncated("the PNG does not start with its header") }
                size = (try reader.uint32(at: offset + 8), try reader.uint32(at: offset + 12))
            }
            if kept.contains(type) { out.append(contentsOf: bytes[offset..<end]) }
            ended = type == "IEND"
            offset = end
        }
        guard let size else { throw .truncated("the PNG has no header") }
        return InspectedImage(format: .png, width: size.width, height: size.height, bytes: out)
    }
}

/// CRC-32 (ISO 3309, as PNG uses it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> Int {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return Int(crc ^ 0xFFFF_FFFF)
    }
}
