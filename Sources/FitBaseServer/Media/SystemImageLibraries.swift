import CLibHEIFABI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system's image libraries, loaded at run time with `dlopen` so that building FitBase needs no headers or `-dev`
/// packages: libjpeg-turbo's TurboJPEG API (`libturbojpeg.so.0`, Debian's `libturbojpeg0`), libpng's simplified
/// `png_image` API (`libpng16.so.16`) and libheif (`libheif.so.1`, Debian's `libheif1`). Only non-variadic functions
/// taking pointers and integers are called, declared here as C function types (libheif's error struct, returned by
/// value, is declared in C: ``CLibHEIFABI``). A library that is not there is `nil`: its format's thumbnails are not made (the photo is
/// served for both sizes).
struct SystemImageLibraries: Sendable {
    let turboJPEG: TurboJPEG?
    let png: LibPNG?
    /// HEIC photos are decoded with libheif and their thumbnails encoded as JPEG (so both are needed).
    var heif: LibHEIF? = nil

    /// Loaded once per process.
    static let shared = SystemImageLibraries(turboJPEG: TurboJPEG.load(), png: LibPNG.load(), heif: LibHEIF.load())

    /// The libraries that could not be loaded, named as their packages are (for the log at start).
    var missing: [String] {
        (turboJPEG == nil ? ["libturbojpeg.so.0 (Debian: libturbojpeg0) for JPEG and HEIC"] : [])
            + (png == nil ? ["libpng16.so.16 (Debian: libpng16-16) for PNG"] : [])
            + (heif == nil ? ["libheif.so.1 (Debian: libheif1) for HEIC"] : [])
    }

    /// The first of `names` that `dlopen` finds.
    fileprivate static func open(_ names: [String]) -> UnsafeMutableRawPointer? {
        for name in names {
            if let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) { return handle }
        }
        return nil
    }

    /// The function `name` of `handle` as the C function type `T`; nil when the library has no such symbol.
    fileprivate static func symbol<T>(_ handle: UnsafeMutableRawPointer, _ name: String, as type: T.Type) -> T? {
        guard let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }
}

/// What a decoder is allowed to build, checked against the size the decoder itself reads from the file before it
/// allocates anything for the pixels.
struct DecodeLimits: Sendable, Equatable, Codable {
    /// The largest width or height.
    var maxSide: Int
    /// The most pixels an image a decoder holds whole may have (a PNG, a HEIC and its grid canvas, a progressive
    /// JPEG's coefficients); a baseline JPEG is decoded already scaled down and only the sides count.
    var maxPixels: Int

    /// Whether an image of `size`, held whole or not, may be decoded.
    func allow(_ size: PixelSize, whole: Bool) -> Bool {
        size.width > 0 && size.height > 0 && size.width <= maxSide && size.height <= maxSide
            && (!whole || size.area <= UInt64(max(0, maxPixels)))
    }
}

/// Why a decoder made no pixels.
enum DecodeFailure: Error, Equatable {
    /// The decoder reads a size past the limits (or different from the one the file was checked with).
    case tooLarge(PixelSize)
    /// The library refused the file.
    case undecodable
}

/// An image's pixels: 8-bit channels (3 for RGB, 4 for RGBA), rows packed.
struct Pixels: Sendable {
    let width: Int
    let height: Int
    let channels: Int
    var bytes: [UInt8]
}

/// The TurboJPEG functions FitBase uses (`turbojpeg.h`, libjpeg-turbo 1.5 and later).
struct TurboJPEG: @unchecked Sendable {
    // Handles are created per call (a TurboJPEG handle is not for concurrent use), so sharing the function pointers is
    // safe: that is what makes the type Sendable.
    private let initDecompress: @convention(c) () -> UnsafeMutableRawPointer?
    private let initCompress: @convention(c) () -> UnsafeMutableRawPointer?
    private let destroy: @convention(c) (UnsafeMutableRawPointer?) -> Int32
    private let decompressHeader3:
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, UInt, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?,
            UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?
        ) -> Int32
    private let decompress2:
        @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, UInt, UnsafeMutablePointer<UInt8>?, Int32, Int32, Int32, Int32, Int32) ->
            Int32
    private let compress2:
        @convention(c) (
            UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int32, Int32, Int32, Int32, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
            UnsafeMutablePointer<UInt>?, Int32, Int32, Int32
        ) -> Int32
    private let free: @convention(c) (UnsafeMutablePointer<UInt8>?) -> Void

    private static let pixelFormatRGB: Int32 = 0  // TJPF_RGB
    private static let subsampling420: Int32 = 2  // TJSAMP_420

    static func load() -> TurboJPEG? {
        guard let handle = SystemImageLibraries.open(["libturbojpeg.so.0", "libturbojpeg.so", "libturbojpeg.0.dylib"]),
            let initDecompress = SystemImageLibraries.symbol(handle, "tjInitDecompress", as: (@convention(c) () -> UnsafeMutableRawPointer?).self),
            let initCompress = SystemImageLibraries.symbol(handle, "tjInitCompress", as: (@convention(c) () -> UnsafeMutableRawPointer?).self),
            let destroy = SystemImageLibraries.symbol(handle, "tjDestroy", as: (@convention(c) (UnsafeMutableRawPointer?) -> Int32).self),
            let decompressHeader3 = SystemImageLibraries.symbol(
                handle, "tjDecompressHeader3",
                as: (@convention(c) (
                    UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, UInt, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?,
                    UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?
                ) -> Int32).self),
            let decompress2 = SystemImageLibraries.symbol(
                handle, "tjDecompress2",
                as: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, UInt, UnsafeMutablePointer<UInt8>?, Int32, Int32, Int32, Int32, Int32)
                    -> Int32).self),
            let compress2 = SystemImageLibraries.symbol(
                handle, "tjCompress2",
                as: (@convention(c) (
                    UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int32, Int32, Int32, Int32, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                    UnsafeMutablePointer<UInt>?, Int32, Int32, Int32
                ) -> Int32).self),
            let free = SystemImageLibraries.symbol(handle, "tjFree", as: (@convention(c) (UnsafeMutablePointer<UInt8>?) -> Void).self)
        else { return nil }
        return TurboJPEG(
            initDecompress: initDecompress, initCompress: initCompress, destroy: destroy, decompressHeader3: decompressHeader3,
            decompress2: decompress2, compress2: compress2, free: free)
    }

    /// The JPEG's pixels (RGB), scaled down by libjpeg's DCT scaling to the smallest eighth (1/8 … 8/8) still at least
    /// `atLeast` pixels on each side, so a large photo is never decoded whole. The size libjpeg reads from the frame
    /// header must be `expected` and within `limits` (whole: a progressive JPEG keeps every coefficient of the image
    /// in memory, scaled or not) before anything is decoded.
    func decode(
        _ jpeg: [UInt8], atLeast target: (width: Int, height: Int), expected: PixelSize, whole: Bool, limits: DecodeLimits
    ) throws(DecodeFailure) -> Pixels {
        guard let handle = initDecompress() else { throw .undecodable }
        defer { _ = destroy(handle) }
        let decoded = jpeg.withUnsafeBufferPointer { source -> Result<Pixels, DecodeFailure> in
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            guard decompressHeader3(handle, source.baseAddress, UInt(source.count), &width, &height, &subsampling, &colorspace) == 0,
                width > 0, height > 0
            else { return .failure(.undecodable) }
            let read = PixelSize(width: Int(width), height: Int(height))
            guard read == expected, limits.allow(read, whole: whole) else { return .failure(.tooLarge(read)) }
            var eighths = 1
            while eighths < 8,
                (Int(width) * eighths + 7) / 8 < target.width || (Int(height) * eighths + 7) / 8 < target.height
            {
                eighths += 1
            }
            let scaledWidth = (Int(width) * eighths + 7) / 8, scaledHeight = (Int(height) * eighths + 7) / 8
            var pixels = [UInt8](repeating: 0, count: scaledWidth * scaledHeight * 3)
            let status = pixels.withUnsafeMutableBufferPointer { destination in
                decompress2(
                    handle, source.baseAddress, UInt(source.count), destination.baseAddress, Int32(scaledWidth), 0, Int32(scaledHeight),
                    Self.pixelFormatRGB, 0)
            }
            guard status == 0 else { return .failure(.undecodable) }
            return .success(Pixels(width: scaledWidth, height: scaledHeight, channels: 3, bytes: pixels))
        }
        return try decoded.get()
    }

    /// `pixels` (RGB) as a baseline JPEG of `quality`, 4:2:0, with no metadata segment at all.
    func encode(_ pixels: Pixels, quality: Int) -> [UInt8]? {
        guard pixels.channels == 3, let handle = initCompress() else { return nil }
        defer { _ = destroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = pixels.bytes.withUnsafeBufferPointer { source in
            compress2(
                handle, source.baseAddress, Int32(pixels.width), 0, Int32(pixels.height), Self.pixelFormatRGB, &output, &size,
                Self.subsampling420, Int32(quality), 0)
        }
        defer { if let output { free(output) } }
        guard status == 0, let output else { return nil }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}

/// libpng's simplified API (`png_image`, libpng 1.6): read a PNG into RGBA, write RGBA as a PNG, both in memory.
struct LibPNG: @unchecked Sendable {
    // Each call has its own `png_image`; the function pointers are shared, which is what makes the type Sendable.
    private let beginReadFromMemory: @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, Int) -> Int32
    private let finishRead: @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?) -> Int32
    private let free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    private let writeToMemory:
        @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) ->
            Int32

    /// `png_image` as png.h lays it out on a 64-bit system: `opaque` (a pointer), then `version`, `width`, `height`,
    /// `format`, `flags`, `colormap_entries`, `warning_or_error` (32 bits each), then `message[64]`.
    private enum Layout {
        static let size = 104
        static let version = 8, width = 12, height = 16, format = 20
        static let imageVersion: UInt32 = 1  // PNG_IMAGE_VERSION
        static let formatRGBA: UInt32 = 3  // PNG_FORMAT_RGBA: colour | alpha
    }

    static func load() -> LibPNG? {
        guard MemoryLayout<Int>.size == 8,
            let handle = SystemImageLibraries.open(["libpng16.so.16", "libpng16.so", "libpng16.16.dylib"]),
            let beginReadFromMemory = SystemImageLibraries.symbol(
                handle, "png_image_begin_read_from_memory", as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, Int) -> Int32).self),
            let finishRead = SystemImageLibraries.symbol(
                handle, "png_image_finish_read",
                as: (@convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?, UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?) -> Int32).self),
            let free = SystemImageLibraries.symbol(handle, "png_image_free", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
            let writeToMemory = SystemImageLibraries.symbol(
                handle, "png_image_write_to_memory",
                as: (@convention(c) (
                    UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?
                ) -> Int32).self)
        else { return nil }
        return LibPNG(beginReadFromMemory: beginReadFromMemory, finishRead: finishRead, free: free, writeToMemory: writeToMemory)
    }

    /// The PNG's pixels as RGBA (palette, grey, 16-bit and transparency converted by libpng). The size libpng reads
    /// from the header must be within `limits` (the image is decoded whole) before the pixels are allocated.
    func decode(_ png: [UInt8], limits: DecodeLimits) throws(DecodeFailure) -> Pixels {
        let image = UnsafeMutableRawPointer.allocate(byteCount: Layout.size, alignment: 8)
        defer { image.deallocate() }
        image.initializeMemory(as: UInt8.self, repeating: 0, count: Layout.size)
        image.storeBytes(of: Layout.imageVersion, toByteOffset: Layout.version, as: UInt32.self)
        let decoded = png.withUnsafeBytes { source -> Result<Pixels, DecodeFailure> in
            guard beginReadFromMemory(image, source.baseAddress, source.count) != 0 else {
                free(image)
                return .failure(.undecodable)
            }
            let width = Int(image.load(fromByteOffset: Layout.width, as: UInt32.self))
            let height = Int(image.load(fromByteOffset: Layout.height, as: UInt32.self))
            guard limits.allow(PixelSize(width: width, height: height), whole: true) else {
                free(image)
                return .failure(.tooLarge(PixelSize(width: width, height: height)))
            }
            image.storeBytes(of: Layout.formatRGBA, toByteOffset: Layout.format, as: UInt32.self)
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            // finish_read frees libpng's state itself, whatever it answers.
            let status = pixels.withUnsafeMutableBytes { destination in
                finishRead(image, nil, destination.baseAddress, Int32(width * 4), nil)
            }
            guard status != 0 else { return .failure(.undecodable) }
            return .success(Pixels(width: width, height: height, channels: 4, bytes: pixels))
        }
        return try decoded.get()
    }

    /// `pixels` (RGBA) as an 8-bit RGBA PNG with no ancillary text or time chunk.
    func encode(_ pixels: Pixels) -> [UInt8]? {
        guard pixels.channels == 4 else { return nil }
        let image = UnsafeMutableRawPointer.allocate(byteCount: Layout.size, alignment: 8)
        defer { image.deallocate() }
        func reset() {
            image.initializeMemory(as: UInt8.self, repeating: 0, count: Layout.size)
            image.storeBytes(of: Layout.imageVersion, toByteOffset: Layout.version, as: UInt32.self)
            image.storeBytes(of: UInt32(pixels.width), toByteOffset: Layout.width, as: UInt32.self)
            image.storeBytes(of: UInt32(pixels.height), toByteOffset: Layout.height, as: UInt32.self)
            image.storeBytes(of: Layout.formatRGBA, toByteOffset: Layout.format, as: UInt32.self)
        }
        return pixels.bytes.withUnsafeBytes { source -> [UInt8]? in
            // First the size it needs, then the bytes.
            reset()
            var size = 0
            guard writeToMemory(image, nil, &size, 0, source.baseAddress, Int32(pixels.width * 4), nil) != 0, size > 0 else { return nil }
            reset()
            var output = [UInt8](repeating: 0, count: size)
            let status = output.withUnsafeMutableBytes { destination in
                writeToMemory(image, destination.baseAddress, &size, 0, source.baseAddress, Int32(pixels.width * 4), nil)
            }
            guard status != 0 else { return nil }
            return Array(output.prefix(size))
        }
    }
}

/// The libheif functions FitBase uses to decode a HEIC photo for its thumbnail (`heif.h`, libheif 1.x: Debian's
/// `libheif1`). Several return `struct heif_error` by value, declared in C by ``CLibHEIFABI``.
struct LibHEIF: @unchecked Sendable {
    // A context is made per call; the function pointers are shared, which is what makes the type Sendable.
    private let contextAlloc: @convention(c) () -> OpaquePointer?
    private let contextFree: @convention(c) (OpaquePointer?) -> Void
    private let readFromMemory: @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeRawPointer?) -> fitbase_heif_error
    private let primaryImageHandle: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> fitbase_heif_error
    private let handleWidth: @convention(c) (OpaquePointer?) -> Int32
    private let handleHeight: @convention(c) (OpaquePointer?) -> Int32
    private let handleRelease: @convention(c) (OpaquePointer?) -> Void
    private let decodeImage:
        @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, Int32, Int32, UnsafeRawPointer?) -> fitbase_heif_error
    private let planeReadonly: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<Int32>?) -> UnsafePointer<UInt8>?
    private let imageWidth: @convention(c) (OpaquePointer?, Int32) -> Int32
    private let imageHeight: @convention(c) (OpaquePointer?, Int32) -> Int32
    private let imageRelease: @convention(c) (OpaquePointer?) -> Void
    private let setMaximumImageSizeLimit: @convention(c) (OpaquePointer?, Int32) -> Void
    private let setMaxDecodingThreads: @convention(c) (OpaquePointer?, Int32) -> Void

    private static let colorspaceRGB: Int32 = 1  // heif_colorspace_RGB
    private static let chromaInterleavedRGB: Int32 = 10  // heif_chroma_interleaved_RGB
    private static let channelInterleaved: Int32 = 10  // heif_channel_interleaved

    static func load() -> LibHEIF? {
        guard let handle = SystemImageLibraries.open(["libheif.so.1", "libheif.so", "libheif.1.dylib"]),
            let contextAlloc = SystemImageLibraries.symbol(handle, "heif_context_alloc", as: (@convention(c) () -> OpaquePointer?).self),
            let contextFree = SystemImageLibraries.symbol(handle, "heif_context_free", as: (@convention(c) (OpaquePointer?) -> Void).self),
            let readFromMemory = SystemImageLibraries.symbol(
                handle, "heif_context_read_from_memory_without_copy",
                as: (@convention(c) (OpaquePointer?, UnsafeRawPointer?, Int, UnsafeRawPointer?) -> fitbase_heif_error).self),
            let primaryImageHandle = SystemImageLibraries.symbol(
                handle, "heif_context_get_primary_image_handle",
                as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?) -> fitbase_heif_error).self),
            let handleWidth = SystemImageLibraries.symbol(handle, "heif_image_handle_get_width", as: (@convention(c) (OpaquePointer?) -> Int32).self),
            let handleHeight = SystemImageLibraries.symbol(handle, "heif_image_handle_get_height", as: (@convention(c) (OpaquePointer?) -> Int32).self),
            let handleRelease = SystemImageLibraries.symbol(handle, "heif_image_handle_release", as: (@convention(c) (OpaquePointer?) -> Void).self),
            let decodeImage = SystemImageLibraries.symbol(
                handle, "heif_decode_image",
                as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, Int32, Int32, UnsafeRawPointer?) -> fitbase_heif_error).self),
            let planeReadonly = SystemImageLibraries.symbol(
                handle, "heif_image_get_plane_readonly",
                as: (@convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<Int32>?) -> UnsafePointer<UInt8>?).self),
            let imageWidth = SystemImageLibraries.symbol(handle, "heif_image_get_width", as: (@convention(c) (OpaquePointer?, Int32) -> Int32).self),
            let imageHeight = SystemImageLibraries.symbol(handle, "heif_image_get_height", as: (@convention(c) (OpaquePointer?, Int32) -> Int32).self),
            let imageRelease = SystemImageLibraries.symbol(handle, "heif_image_release", as: (@convention(c) (OpaquePointer?) -> Void).self),
            let setMaximumImageSizeLimit = SystemImageLibraries.symbol(
                handle, "heif_context_set_maximum_image_size_limit", as: (@convention(c) (OpaquePointer?, Int32) -> Void).self),
            let setMaxDecodingThreads = SystemImageLibraries.symbol(
                handle, "heif_context_set_max_decoding_threads", as: (@convention(c) (OpaquePointer?, Int32) -> Void).self)
        else { return nil }
        return LibHEIF(
            contextAlloc: contextAlloc, contextFree: contextFree, readFromMemory: readFromMemory, primaryImageHandle: primaryImageHandle,
            handleWidth: handleWidth, handleHeight: handleHeight, handleRelease: handleRelease, decodeImage: decodeImage,
            planeReadonly: planeReadonly, imageWidth: imageWidth, imageHeight: imageHeight, imageRelease: imageRelease,
            setMaximumImageSizeLimit: setMaximumImageSizeLimit, setMaxDecodingThreads: setMaxDecodingThreads
        )
    }

    /// The primary image's pixels as RGB, turned as its `irot`/`imir` boxes say (libheif applies them while decoding).
    /// libheif itself is held to `limits.maxSide` (its own check of every image size and grid canvas it reads, before
    /// it allocates) and to one decoding thread; the size of the primary image must be within `limits` (it is decoded
    /// whole, 3 bytes a pixel) before it is decoded.
    func decode(_ heic: [UInt8], limits: DecodeLimits) throws(DecodeFailure) -> Pixels {
        guard let context = contextAlloc() else { throw .undecodable }
        defer { contextFree(context) }
        setMaximumImageSizeLimit(context, Int32(clamping: limits.maxSide))
        setMaxDecodingThreads(context, 0)
        let decoded = heic.withUnsafeBytes { source -> Result<Pixels, DecodeFailure> in
            guard readFromMemory(context, source.baseAddress, source.count, nil).code == 0 else { return .failure(.undecodable) }
            var handle: OpaquePointer?
            guard primaryImageHandle(context, &handle).code == 0, let handle else { return .failure(.undecodable) }
            defer { handleRelease(handle) }
            let stated = PixelSize(width: Int(handleWidth(handle)), height: Int(handleHeight(handle)))
            guard limits.allow(stated, whole: true) else { return .failure(.tooLarge(stated)) }
            var image: OpaquePointer?
            guard decodeImage(handle, &image, Self.colorspaceRGB, Self.chromaInterleavedRGB, nil).code == 0, let image else {
                return .failure(.undecodable)
            }
            defer { imageRelease(image) }
            let width = Int(imageWidth(image, Self.channelInterleaved)), height = Int(imageHeight(image, Self.channelInterleaved))
            guard limits.allow(PixelSize(width: width, height: height), whole: true) else {
                return .failure(.tooLarge(PixelSize(width: width, height: height)))
            }
            var stride: Int32 = 0
            guard let plane = planeReadonly(image, Self.channelInterleaved, &stride), Int(stride) >= width * 3 else {
                return .failure(.undecodable)
            }
            var pixels = [UInt8](repeating: 0, count: width * height * 3)
            pixels.withUnsafeMutableBufferPointer { destination in
                for row in 0..<height {
                    (destination.baseAddress! + row * width * 3).update(from: plane + row * Int(stride), count: width * 3)
                }
            }
            return .success(Pixels(width: width, height: height, channels: 3, bytes: pixels))
        }
        return try decoded.get()
    }
}
