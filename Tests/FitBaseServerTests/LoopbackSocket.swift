import Foundation

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A plain blocking TCP socket to a live test server, for what an HTTP client would not send (half a request, several
/// requests in one write).
enum LoopbackSocket {
    struct ConnectFailed: Error, CustomStringConvertible {
        let errno: Int32
        var description: String { "cannot connect to the test server (errno \(errno))" }
    }

    /// A socket connected to 127.0.0.1:`port`; a read on it gives up after 10 seconds.
    static func connect(port: Int) throws -> Int32 {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                Darwin.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard connected == 0 else {
            let failure = ConnectFailed(errno: errno)
            close(socket)
            throw failure
        }
        return socket
    }
}
