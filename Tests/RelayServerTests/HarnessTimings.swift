/// Settings every platform's end-to-end harness shares.
enum HarnessTimings {
    /// The server's idle timeout in the harnesses. A test's client keeps one connection and may
    /// leave it idle longer than the server's 30 s while it waits on a slow peer (the speech
    /// model on a loaded machine); the server would close it under the client, whose next
    /// request then fails with "I/O on closed channel".
    static let idleTimeout: Duration = .seconds(600)
}
