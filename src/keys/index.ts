export * from './load';
export * from './client-keys';
export * from './remote-key-set';
export * from './verify-jws';
export * from './client-assertion';
