import Foundation
import Synchronization

/// While a command runs and nothing of its answer shows yet, a spinner and the seconds elapsed on
/// one line of stderr ("⠙ 3 s · Ctrl-C stops it"), erased before anything else is written — so
/// a slow model is visibly at work, and no reply shares its line.
public final class WorkingIndicator: Sendable {
    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
    private let write: @Sendable (String) -> Void
    /// The ticking task, while the spinner shows. Frames are written under this lock, and so is
    /// the erasing: no frame can follow it.
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    /// `write`: the terminal's stderr, as it is (no newline added).
    public init(write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    func start() {
        stop()
        let task = Task { [self] in
            let started = ContinuousClock.now
            var frame = 0
            while !Task.isCancelled {
                let seconds = Int(started.duration(to: .now).components.seconds)
                let line = "\r\(Self.frames[frame % Self.frames.count]) \(seconds) s · Ctrl-C stops it"
                ticker.withLock { current in if current != nil && !Task.isCancelled { write(line) } }
                frame += 1
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        ticker.withLock { $0 = task }
    }

    /// Stops the spinner and erases its line; nothing when it is not showing.
    func stop() {
        ticker.withLock { current in
            guard let task = current else { return }
            task.cancel()
            current = nil
            write("\r\u{1B}[K")
        }
    }
}
