#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes from the operating system's cryptographically secure generator, many at once.
public enum SecureRandom {
    /// Fills `bytes` with random bytes: on Linux read from `/dev/urandom` (the kernel's generator, as `getrandom` and
    /// `SystemRandomNumberGenerator` draw from it, but in one call instead of one per eight bytes), `arc4random_buf`
    /// on Apple platforms.
    public static func fill(_ bytes: inout [UInt8]) throws {
        #if canImport(Glibc)
        guard let device = urandom else { throw SecureRandomError(code: ENOENT) }
        let failure: Int32? = bytes.withUnsafeMutableBytes { buffer in
            var filled = 0
            while filled < buffer.count {
                let read = Glibc.read(device, buffer.baseAddress! + filled, buffer.count - filled)
                if read < 0, errno == EINTR { continue }
                if read < 0 { return errno }
                if read == 0 { return EIO }
                filled += read
            }
            return nil
        }
        if let failure { throw SecureRandomError(code: failure) }
        #else
        bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress, $0.count) }
        #endif
    }

    #if canImport(Glibc)
    /// `/dev/urandom`, opened once for the life of the process (`nil` if it cannot be).
    private static let urandom: Int32? = {
        let device = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        return device < 0 ? nil : device
    }()
    #endif
}

/// The generator failed (an `errno`).
public struct SecureRandomError: Error {
    public let code: Int32
}
