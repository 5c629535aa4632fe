// The one function of `fs-native-extensions` the log uses; the package ships no types.
declare module "fs-native-extensions" {
  /** Takes an open-file-description lock on the whole file; false when another description holds it. */
  export function tryLock(fd: number, options?: { shared?: boolean }): boolean;
  const fsx: { tryLock: typeof tryLock };
  export default fsx;
}
