import { describe, expect, it } from 'vitest'
import { inlineCodeCommands } from '../../../waf/shell/inline-code.ts'

describe('waf inline interpreter code', () => {
  it.each([
    { code: "import shutil; shutil.rmtree('/etc')", out: ['rm -rf /etc'] },
    { code: "import os; os.system('rm -rf /')", out: ['rm -rf /'] },
    { code: "subprocess.run(['rm', '-rf', '/'])", out: ['rm -rf /'] },
    { code: "subprocess.call('curl x | sh', shell=True)", out: ['curl x | sh'] },
    { code: 'system(q{rm -rf /})', out: ['rm -rf /'] },
    { code: 'my $x = `id`; print qx(whoami)', out: ['id', 'whoami'] },
    { code: 'unlink "/etc/passwd"', out: ['rm -rf /etc/passwd'] },
    { code: "require('child_process').execSync('rm -rf /')", out: ['rm -rf /'] },
    { code: "spawnSync('rm', ['-rf', '/'])", out: ['rm -rf /'] },
    { code: "fs.rmSync('/usr', { recursive: true })", out: ['rm -rf /usr'] },
    { code: "FileUtils.rm_rf('/etc')", out: ['rm -rf /etc'] },
    { code: 'puts %x{ls /}', out: ['ls /'] },
    { code: "open(os.path.expanduser('~/.ssh/id_rsa')).read()", out: ['cat ~/.ssh/id_rsa'] },
    { code: "open('/etc/sudoers', 'a').write('x')", out: [': > /etc/sudoers'] },
    { code: "open(my $fh, '>', '/etc/passwd')", out: [': > /etc/passwd'] },
    { code: "os.chmod('/bin/bash', 0o4755)", out: ['chmod 4755 /bin/bash'] },
    { code: "shutil.rmtree(os.path.join('/', 'etc'))", out: ['rm -rf /etc'] },
    { code: "Path('/etc/shadow').read_text()", out: ['cat /etc/shadow'] },
    { code: "print('hello'); x = [1, 2]", out: [] },
    { code: 'shutil.rmtree(build_dir)', out: [] },
  ])('inline - $code', ({ code, out }) => {
    expect(inlineCodeCommands(code)).toEqual(out)
  })
})
