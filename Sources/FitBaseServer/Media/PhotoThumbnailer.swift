import FitBaseCore

/// An image made from a photo: its format, size in pixels and bytes.
struct EncodedImage: Sendable, Equatable {
    let format: ImageFormat
    let width: Int
    let height: Int
    let bytes: [UInt8]
}

/// Makes the thumbnail of a checked, cleaned photo: decoded with the system's libraries (``SystemImageLibraries``),
/// scaled down in Swift by area averaging to ``PhotoSize/thumbnailMaxSide`` pixels on the longest side, turned upright
/// by the JPEG's EXIF orientation, and encoded again — JPEG (quality 85) for a JPEG, PNG (with its transparency) for a
/// PNG, JPEG for a HEIC (decoded by libheif, which turns it upright) — with no metadata at all.
///
/// This is the decoding itself, as an image worker runs it (``ImageWorker``): the server never calls it in its own
/// process, it asks a worker (``ContainedThumbnailer``).
struct PhotoThumbnailer: Sendable {
    let libraries: SystemImageLibraries
    /// What a decoder may build; the size each library reads from the file is checked against it before decoding.
    var limits = DecodeLimits(maxSide: 8192, maxPixels: 50_000_000)

    /// The thumbnail of `image`: nil when it is small enough already or its format has no library here; a decoder's
    /// refusal or failure throws.
    func thumbnail(of image: InspectedImage) throws(DecodeFailure) -> EncodedImage? {
        guard let target = PhotoSize.thumbnailDimensions(width: image.width, height: image.height) else { return nil }
        switch image.format {
        case .jpeg:
            guard let codec = libraries.turboJPEG else { return nil }
            let decoded = try codec.decode(image.bytes, atLeast: target, expected: image.size, whole: image.decodedWhole, limits: limits)
            let upright = AreaAverage.scale(decoded, to: target).oriented(JPEGOrientation.of(image.bytes))
            guard let bytes = codec.encode(upright, quality: 85) else { throw .undecodable }
            return EncodedImage(format: .jpeg, width: upright.width, height: upright.height, bytes: bytes)
        case .png:
            guard let codec = libraries.png else { return nil }
            let small = AreaAverage.scale(try codec.decode(image.bytes, limits: limits), to: target)
            guard let bytes = codec.encode(small) else { throw .undecodable }
            return EncodedImage(format: .png, width: small.width, height: small.height, bytes: bytes)
        case .heic:
            // Decoded whole (upright: libheif applies the image's rotation and mirroring), thumbnail made as a JPEG.
            guard let heif = libraries.heif, let codec = libraries.turboJPEG else { return nil }
            let decoded = try heif.decode(image.bytes, limits: limits)
            guard let target = PhotoSize.thumbnailDimensions(width: decoded.width, height: decoded.height) else { return nil }
            let small = AreaAverage.scale(decoded, to: target)
            guard let bytes = codec.encode(small, quality: 85) else { throw .undecodable }
            return EncodedImage(format: .jpeg, width: small.width, height: small.height, bytes: bytes)
        }
    }
}

/// Scaling down by area averaging: each output pixel is the mean of the source area it covers, fractional source
/// pixels weighted by how much of them it covers (a box filter, in two passes: rows, then columns).
enum AreaAverage {
    static func scale(_ source: Pixels, to target: (width: Int, height: Int)) -> Pixels {
        guard target.width < source.width || target.height < source.height else { return source }
        let channels = source.channels
        let columns = weights(from: source.width, to: target.width)
        let rows = weights(from: source.height, to: target.height)
        // Pass 1: every source row narrowed to the target width.
        var narrowed = [Float](repeating: 0, count: source.height * target.width * channels)
        source.bytes.withUnsafeBufferPointer { input in
            for y in 0..<source.height {
                let inRow = y * source.width * channels, outRow = y * target.width * channels
                for (x, spans) in columns.enumerated() {
                    for channel in 0..<channels {
                        var sum: Float = 0
                        for span in spans { sum += Float(input[inRow + span.index * channels + channel]) * span.weight }
                        narrowed[outRow + x * channels + channel] = sum
                    }
                }
            }
        }
        // Pass 2: the rows combined to the target height.
        var output = [UInt8](repeating: 0, count: target.height * target.width * channels)
        let rowLength = target.width * channels
        for (y, spans) in rows.enumerated() {
            for position in 0..<rowLength {
                var sum: Float = 0
                for span in spans { sum += narrowed[span.index * rowLength + position] * span.weight }
                output[y * rowLength + position] = UInt8(max(0, min(255, sum.rounded())))
            }
        }
        return Pixels(width: target.width, height: target.height, channels: channels, bytes: output)
    }

    struct Span {
        let index: Int
        let weight: Float
    }

    /// For each of `count` output positions, the source positions it covers and their weights (summing to 1).
    static func weights(from length: Int, to count: Int) -> [[Span]] {
        let ratio = Double(length) / Double(count)
        return (0..<count).map { index in
            let start = Double(index) * ratio, end = min(Double(length), Double(index + 1) * ratio)
            var spans: [Span] = []
            var position = Int(start)
            while Double(position) < end, position < length {
                let covered = min(end, Double(position + 1)) - max(start, Double(position))
                if covered > 0 { spans.append(Span(index: position, weight: Float(covered / (end - start)))) }
                position += 1
            }
            return spans
        }
    }
}

extension Pixels {
    /// The pixels as they are shown with EXIF orientation `orientation` (1–8): mirrored and/or turned upright.
    func oriented(_ orientation: Int) -> Pixels {
        guard (2...8).contains(orientation) else { return self }
        let swaps = orientation >= 5
        let outWidth = swaps ? height : width, outHeight = swaps ? width : height
        var output = [UInt8](repeating: 0, count: bytes.count)
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                // The source pixel shown at (x, y).
                let (sx, sy): (Int, Int) =
                    switch orientation {
                    case 2: (width - 1 - x, y)
                    case 3: (width - 1 - x, height - 1 - y)
                    case 4: (x, height - 1 - y)
                    case 5: (y, x)
                    case 6: (y, height - 1 - x)
                    case 7: (width - 1 - y, height - 1 - x)
                    default: (width - 1 - y, x)
                    }
                let from = (sy * width + sx) * channels, to = (y * outWidth + x) * channels
                for channel in 0..<channels { output[to + channel] = bytes[from + channel] }
            }
        }
        return Pixels(width: outWidth, height: outHeight, channels: channels, bytes: output)
    }
}

/// The EXIF orientation a cleaned JPEG keeps (its only APP1 segment holds just that tag).
enum JPEGOrientation {
    /// The orientation (1–8) in the JPEG's APP1 segments before its first scan; 1 when none says otherwise.
    static func of(_ jpeg: [UInt8]) -> Int {
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
            let marker = jpeg[offset + 1]
            guard marker != 0xDA, marker != 0xD9 else { break }
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            guard length >= 2, offset + 2 + length <= jpeg.count else { break }
            if marker == 0xE1, let value = JPEGCleaner.exifOrientation(Array(jpeg[(offset + 4)..<(offset + 2 + length)])) { return value }
            offset += 2 + length
        }
        return 1
    }
}
