import { TestEnvironment } from 'jest-environment-node';

/**
 * jest's node environment, plus a way for the malformed-input tables to listen for unhandled rejections on the REAL
 * process: inside a test file `process` is a copy that never receives them. The listener is added in the suite's
 * beforeAll (after jest-circus installs its own handlers, which replace whatever was there at the start of the run)
 * and removed in afterAll; see trapUnhandledRejections in ./harness.
 */
export default class MalformedInputEnvironment extends TestEnvironment {
  override async setup(): Promise<void> {
    await super.setup();
    this.global.__hostProcessOnUnhandledRejection = (listener: (reason: unknown) => void): (() => void) => {
      process.on('unhandledRejection', listener);
      return () => process.off('unhandledRejection', listener);
    };
  }
}
