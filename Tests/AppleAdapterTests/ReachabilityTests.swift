import FitBaseClient
import Foundation
import Network
import Testing

/// ``NetworkPathReachability`` over `NWPathMonitor`'s path updates.
@Suite(.serialized) struct ReachabilityTests {
    init() { _NetworkShim.reset() }

    @Test func reachableWhileThePathIsSatisfied() async {
        var updates = NetworkPathReachability().updates().makeAsyncIterator()
        #expect(await updates.next() == true)
        _NetworkShim.setPath(.unsatisfied)
        #expect(await updates.next() == false)
        _NetworkShim.setPath(.satisfied)
        #expect(await updates.next() == true)
        // A path that needs a connection attempt first is not reachable yet.
        _NetworkShim.setPath(.requiresConnection)
        #expect(await updates.next() == false)
    }

    @Test func cancellingTheListenerStopsTheMonitor() async {
        let heard = AsyncStream<Bool>.makeStream()
        let listener = Task {
            for await reachable in NetworkPathReachability().updates() { heard.continuation.yield(reachable) }
        }
        var iterator = heard.stream.makeAsyncIterator()
        #expect(await iterator.next() == true)
        #expect(_NetworkShim.activeMonitors == 1)
        listener.cancel()
        await listener.value
        #expect(_NetworkShim.activeMonitors == 0)
    }
}
