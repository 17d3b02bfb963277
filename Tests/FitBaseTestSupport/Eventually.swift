/// Waits for `condition` to hold, checking it every `interval` (yielding instead when it is zero) for up to `timeout`;
/// whether it held. A throw counts as "not yet". The condition runs in the caller's isolation, so a main-actor test can
/// read its models.
package func eventually(
    timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(50), isolation: isolated (any Actor)? = #isolation,
    _ condition: () async throws -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if (try? await condition()) == true { return true }
        if interval == .zero {
            await Task.yield()
        } else {
            try? await Task.sleep(for: interval)
        }
    }
    return (try? await condition()) == true
}
