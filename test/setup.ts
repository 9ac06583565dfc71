import nock from 'nock';

// Tests never leave this machine: Svix calls are mocked with nock, and the
// sandbox's own servers listen on loopback only.
nock.disableNetConnect();
nock.enableNetConnect(/^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/);

afterEach(() => {
  nock.cleanAll();
});
