import NIOCore

/// The last handler of an SMTP client channel: splits the server's bytes into ``SMTPReply`` values and hands each to
/// the command waiting for it, failing that command when the reply is late, malformed or the connection ends.
///
/// Used only on the channel's event loop.
final class SMTPReplyReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// Why no reply came.
    enum Failure: Error {
        case timedOut
        case closed
        case malformed(String)
        case network(any Error)
    }

    /// Longest reply line accepted; RFC 5321 allows 512 octets, servers send more in practice.
    private static let maximumLineLength = 4096
    /// Most lines accepted in one reply (a long EHLO list has about twenty).
    private static let maximumLinesPerReply = 512

    private let eventLoop: any EventLoop
    private var context: ChannelHandlerContext?
    /// Bytes of a line not yet ended.
    private var unread = ByteBuffer()
    /// Lines of the reply being read, before its last line.
    private var pendingLines: [SMTPReply.Line] = []
    /// Replies that arrived before anyone asked for them (the greeting, or an early answer).
    private var replies = CircularBuffer<SMTPReply>()
    private var waiting: (promise: EventLoopPromise<SMTPReply>, deadline: Scheduled<Void>)?
    /// Set once: every later request fails with it.
    private var failure: Failure?

    /// Whether the server sent nothing that has not been handed out; checked before TLS starts, so that plain-text
    /// bytes sent ahead of the handshake cannot pass for replies read over TLS.
    var hasNothingUnread: Bool { unread.readableBytes == 0 && pendingLines.isEmpty && replies.isEmpty }

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// The next reply, failed with ``Failure/timedOut`` (closing the channel) unless it arrives within `timeout`.
    func nextReply(within timeout: TimeAmount) -> EventLoopFuture<SMTPReply> {
        if let reply = replies.popFirst() { return eventLoop.makeSucceededFuture(reply) }
        if let failure { return eventLoop.makeFailedFuture(failure) }
        guard context != nil else { return eventLoop.makeFailedFuture(Failure.closed) }
        precondition(waiting == nil, "one SMTP command at a time")
        let promise = eventLoop.makePromise(of: SMTPReply.self)
        let deadline = eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in fail(.timedOut) }
        waiting = (promise, deadline)
        return promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        unread.writeBuffer(&bytes)
        while failure == nil, let newline = unread.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            var line = unread.readString(length: newline - unread.readerIndex)!
            unread.moveReaderIndex(forwardBy: 1)
            if line.hasSuffix("\r") { line.removeLast() }
            read(line: line)
        }
        if unread.readableBytes > Self.maximumLineLength { fail(.malformed("a reply line longer than \(Self.maximumLineLength) bytes")) }
        unread.discardReadBytes()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(.network(error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.closed)
        context.fireChannelInactive()
    }

    private func read(line: String) {
        guard let parsed = SMTPReply.Line(Substring(line)), pendingLines.first.map({ $0.code == parsed.code }) ?? true else {
            fail(.malformed("the reply line \"\(line.prefix(200))\""))
            return
        }
        pendingLines.append(parsed)
        guard pendingLines.count <= Self.maximumLinesPerReply else {
            fail(.malformed("a reply of more than \(Self.maximumLinesPerReply) lines"))
            return
        }
        guard parsed.isLast else { return }
        let reply = SMTPReply(code: parsed.code, lines: pendingLines.map(\.text))
        pendingLines = []
        if let waiting {
            self.waiting = nil
            waiting.deadline.cancel()
            waiting.promise.succeed(reply)
        } else {
            replies.append(reply)
        }
    }

    /// Records the first failure, fails the waiting command and closes the channel.
    func fail(_ failure: Failure) {
        if self.failure == nil { self.failure = failure }
        if let waiting {
            self.waiting = nil
            waiting.deadline.cancel()
            waiting.promise.fail(self.failure!)
        }
        context?.close(promise: nil)
    }
}
